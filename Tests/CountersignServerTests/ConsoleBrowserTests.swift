import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The console in real Chromium against a listening server, the administrator's phone and the
/// new user's phone being SDK enrollments. With `COUNTERSIGN_SCREENSHOTS=1` the pages are saved
/// to `docs/screenshots/`.
@Suite("Console in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct ConsoleBrowserTests {
    @Test("An administrator signs in by approving on the phone, creates a user and an invitation, and a phone enrolls from the QR code on the screen",
          .enabled(if: ZXingReader.isAvailable, "python3 with zxingcpp and Pillow is not available"))
    func signInCreateUserInviteAndEnrollFromTheScreen() async throws {
        try await TestServer.with(.sqlite) { server in
            let admin = try await server.enrolledUser("root")
            let granted = try await server.admin(
                "PUT", "/admin/v1/tenants/default/users/\(admin.userID)/console-role", json: ["role": "system-admin"])
            #expect(granted.status == 200, "\(granted.errorDescription ?? "")")
            let browser = try await Browser.start(width: 1280, height: 900)
            do {
                try await browser.open(server.base + "/console")
                try await browser.waitFor(text: "to continue to Countersign console")
                try await browser.find("#username").type("root")
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "Approve on your phone")
                let request = try #require(try await admin.kit.pendingRequests().first)
                _ = try await admin.kit.approve(try await admin.kit.details(for: request))
                _ = try await browser.waitForURL(where: { $0.hasSuffix("/console") })
                try await browser.waitFor(text: "Signed in as root, system administrator")
                try await CodeFlowBrowserTests.screenshot(browser, "console-dashboard")

                // A bad username: the message beside the field, what was typed kept.
                try await browser.find("a[href='/console/users']").click()
                try await browser.find("#username").type("has space")
                try await browser.find("#create-user").click()
                let error = try await browser.waitFor(css: "#username-error")
                #expect(try await error.text().contains("white space"))
                #expect(try await browser.find("#username").property("value", as: String.self) == "has space")

                try await browser.find("#username").clear()
                try await browser.find("#username").type("carol")
                try await browser.find("#display_name").type("Carol C")
                try await browser.find("#create-user").click()
                _ = try await browser.waitFor(css: "#user-heading")
                try await browser.find("#create-invitation").click()
                _ = try await browser.waitFor(css: "#invitation-qr")
                try await CodeFlowBrowserTests.screenshot(browser, "console-invitation")

                // The phone scans the code on the screen.
                let symbols = try ZXingReader.decode([try await browser.screenshot()])
                let scanned = try #require(symbols.first?.first?.text, "no QR code on the screen")
                let (kit, _) = server.authenticator()
                _ = try await kit.enroll(uri: scanned, deviceName: "Carol's phone", platform: .linux)
                // The invitation was the answer to a form; the user's page is its address without it.
                let invitationPage = try await browser.currentURL()
                try await browser.open(String(invitationPage.dropLast("/invitations".count)))
                try await browser.waitFor(text: "Carol's phone")
                try await CodeFlowBrowserTests.screenshot(browser, "console-user")

                // At phone width the lists are one column: nothing wider than the screen.
                try await browser.windowSize(width: 390, height: 844)
                try await browser.open(server.base + "/console/users")
                try await browser.waitFor(text: "Create a user")
                let fits: Bool = try await browser.execute(
                    script: "return document.documentElement.scrollWidth <= window.innerWidth + 1")
                #expect(fits, "the users page is wider than a phone's screen")
                try await CodeFlowBrowserTests.screenshot(browser, "console-users-phone")
            } catch {
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
    }
}
