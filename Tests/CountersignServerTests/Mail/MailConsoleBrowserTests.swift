import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The console's invitation by e-mail, in Chromium: the box shows for a user with an address,
/// and the link the page shows is the link the mail carries.
@Suite("Mail from the console, in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct MailConsoleBrowserTests {
    @Test("An administrator sends an invitation by e-mail from the user's page")
    func invitationByMailFromTheConsole() async throws {
        guard SMTPHarness.available else { return }
        let smtp = try await SMTPHarness.make(.starttls)
        defer { smtp.shutdown() }
        try await TestServer.with(.sqlite) { server in
            let admin = try await server.enrolledUser("root")
            let granted = try await server.admin(
                "PUT", "/admin/v1/tenants/default/users/\(admin.userID)/console-role", json: ["role": "system-admin"])
            #expect(granted.status == 200, "\(granted.errorDescription ?? "")")
            try await MailTests.configure(server, smtp)
            let carol = try await MailTests.userWithAddress(server, "carol", email: "carol@example.com", name: "Carol C")
            let dave = try await server.createUser("dave")

            let browser = try await Browser.start(width: 1280, height: 900)
            do {
                try await browser.open(server.base + "/console")
                try await browser.find("#username").type("root")
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "Approve on your phone")
                let request = try #require(try await admin.kit.pendingRequests().first)
                _ = try await admin.kit.approve(try await admin.kit.details(for: request))
                _ = try await browser.waitForURL(where: { $0.hasSuffix("/console") })

                // A user without an address: no box, a hint instead.
                try await browser.open(server.base + "/console/users/\(dave)")
                _ = try await browser.waitFor(css: "#user-heading")
                #expect(try await browser.bodyText().contains("Set an e-mail address below to send invitations by e-mail as well."))
                #expect(try await browser.findAll("#invitation-email").isEmpty)

                try await browser.open(server.base + "/console/users/\(carol)")
                _ = try await browser.waitFor(css: "#user-heading")
                #expect(try await browser.bodyText().contains("Also send the link by e-mail to carol@example.com"))
                try await browser.find("#invitation-email").click()
                try await browser.find("#create-invitation").click()
                let mailed = try await browser.waitFor(css: "#invitation-mailed")
                #expect(try await mailed.text().contains("The link is on its way to carol@example.com"))
                let link = try await browser.find("#invitation-url").text()

                let received = try #require(try await smtp.waitFor(1).first)
                #expect(received.rcptTos == ["carol@example.com"])
                #expect(received.subject == "Set up sign-in approvals for Default")
                #expect(received.text?.contains(link) == true, "the mail carries the link the page shows")
                await browser.quit()
            } catch {
                await browser.quit()
                throw error
            }
        }
    }
}
