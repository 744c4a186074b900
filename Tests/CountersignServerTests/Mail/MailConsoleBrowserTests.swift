import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The console's invitation by e-mail, in Chromium: the box shows for a user with an address,
/// and the link the page shows is the link the mail carries.
@Suite("Mail from the console, in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct MailConsoleBrowserTests {
    /// A user "root" with the system-admin console role and an enrolled phone.
    static func consoleAdmin(_ server: TestServer) async throws -> EnrolledUser {
        let admin = try await server.enrolledUser("root")
        let granted = try await server.admin(
            "PUT", "/admin/v1/tenants/default/users/\(admin.userID)/console-role", json: ["role": "system-admin"])
        #expect(granted.status == 200, "\(granted.errorDescription ?? "")")
        return admin
    }

    /// Signs in to the console as `admin`, approving on the phone.
    static func signIn(_ browser: Browser, _ server: TestServer, _ admin: EnrolledUser) async throws {
        try await browser.open(server.base + "/console")
        try await browser.signInByPhone(admin)
        _ = try await browser.waitForURL(where: { $0.hasSuffix("/console") })
    }

    @Test("An administrator sends an invitation by e-mail from the user's page")
    func invitationByMailFromTheConsole() async throws {
        guard SMTPHarness.available else { return }
        let smtp = try await SMTPHarness.make(.starttls)
        defer { smtp.shutdown() }
        try await TestServer.with(.sqlite) { server in
            let admin = try await Self.consoleAdmin(server)
            try await MailTests.configure(server, smtp)
            let carol = try await MailTests.userWithAddress(server, "carol", email: "carol@example.com", name: "Carol C")
            let dave = try await server.createUser("dave")

            let browser = try await Browser.start(width: 1280, height: 900)
            do {
                try await Self.signIn(browser, server, admin)

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

    @Test("An administrator sets the mail settings in the console, sees a refusal beside its field, sends a test message, sees the recent mail and removes the settings")
    func mailSettingsPage() async throws {
        guard SMTPHarness.available else { return }
        let smtp = try await SMTPHarness.make(.starttls)
        defer { smtp.shutdown() }
        try await TestServer.with(.sqlite) { server in
            let admin = try await Self.consoleAdmin(server)
            let browser = try await Browser.start(width: 1280, height: 1400)
            do {
                try await Self.signIn(browser, server, admin)

                try await browser.find("a[href='/console/mail']").click()
                _ = try await browser.waitFor(css: "#no-mail")
                try await browser.find("#host").type("127.0.0.1")
                try await browser.find("#port").type("not a port")
                try await browser.find("#ca_certificate").type(smtp.caPEM)
                try await browser.find("#username").type(SMTPHarness.user)
                try await browser.find("#password").type(SMTPHarness.password)
                try await browser.find("#from_address").type("no-reply@example.com")
                try await browser.find("#save-mail").click()
                let portError = try await browser.waitFor(css: "#port-error")
                #expect(try await portError.text().contains("must be from 1 to 65535"))
                #expect(try await browser.find("#host").property("value", as: String.self) == "127.0.0.1", "the form as typed")
                #expect(try await browser.find("#password").property("value", as: String.self) == "", "never the password")
                #expect(try await server.admin("GET", MailTests.base).status == 404, "nothing was stored")

                try await browser.find("#port").clear()
                try await browser.find("#port").type("\(smtp.port)")
                try await browser.find("#password").type(SMTPHarness.password)
                try await browser.find("#save-mail").click()
                let saved = try await browser.waitFor(css: "#notice")
                #expect(try await saved.text().contains("Saved"))
                try await CodeFlowBrowserTests.screenshot(browser, "console-mail")

                // Templates set through the API are kept when the page saves, as is the password.
                let templated = try await server.admin("PUT", MailTests.base, json: MailTests.settings(smtp, [
                    "templates": ["test": ["subject": "Check from {{tenant}}", "text": "It works.\n"]]]))
                #expect(templated.status == 200, "\(templated.errorDescription ?? "")")
                try await browser.open(server.base + "/console/mail")
                #expect(try await browser.bodyText().contains("This tenant's own templates (test) are kept."))
                try await browser.find("#from_name").type("Example sign-in")
                try await browser.find("#save-mail").click()
                #expect(try await browser.waitFor(css: "#notice").text().contains("Saved"))
                let kept = try await server.admin("GET", MailTests.base)
                #expect((kept["templates"] as? [String: any Sendable])?["test"] != nil)
                #expect(kept["from_name"] as? String == "Example sign-in" && kept["password_set"] as? Bool == true)

                try await browser.find("#to").type("bounce@example.com")
                try await browser.find("#send-test").click()
                let refused = try await browser.waitFor(css: "#test-error")
                #expect(try await refused.text().contains("550"), "the mail server's own reason")
                try await browser.find("#to").clear()
                try await browser.find("#to").type("ops@example.com")
                try await browser.find("#send-test").click()
                let accepted = try await browser.waitFor(css: "#notice")
                #expect(try await accepted.text().contains("The test message to ops@example.com was accepted"))
                let test = try #require(try await smtp.waitFor(1).first)
                #expect(test.rcptTos == ["ops@example.com"] && test.subject == "Check from Default")
                #expect(test.fromName == "Example sign-in")

                // Mail queued shows in the recent mail.
                let carol = try await MailTests.userWithAddress(server, "carol", email: "carol@example.com", name: "Carol C")
                let ticket = try await server.admin("POST", "/admin/v1/tenants/default/users/\(carol)/enrollment-tickets",
                                                    json: ["send_email": true])
                let mailID = try #require(ticket["mail_id"] as? String)
                _ = try await smtp.waitFor(2)
                try await eventually("the invitation shows as sent") {
                    try await MailTests.deliveries(server).first?["status"] as? String == "sent"
                }
                try await browser.open(server.base + "/console/mail")
                let row = try await browser.waitFor(css: "#delivery-\(mailID)")
                #expect(try await row.text().contains("carol@example.com"))
                #expect(try await row.text().contains("sent"))

                try await browser.find("#delete-mail").click()
                #expect(try await browser.waitFor(css: "#notice").text().contains("Tick the box"))
                try await browser.find("#confirm-delete").click()
                try await browser.find("#delete-mail").click()
                _ = try await browser.waitFor(css: "#no-mail")
                #expect(try await server.admin("GET", MailTests.base).status == 404)
                await browser.quit()
            } catch {
                await browser.quit()
                throw error
            }
        }
    }
}
