import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// Enrollment invitations in real Chromium, against the server listening on a free port, the
/// phones being SDK enrollments: the invitee ends signed in as themselves, whatever the browser
/// was signed in as, and a page left open past the invitation's expiry says so as a reload
/// would. With `COUNTERSIGN_SCREENSHOTS=1` the invitation page is saved to `docs/screenshots/`.
@Suite("Enrollment invitations in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct InvitationBrowserTests {
    @Test("A first-time user opens an invitation, enrolls the phone from the page's QR code, and signs in as themselves with it")
    func firstPhoneFromAnInvitation() async throws {
        try await TestServer.with(.sqlite) { server in
            let userID = try await server.createUser("carol")
            let ticket = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
            let invitation = try #require(ticket["invitation_url"] as? String)
            try await Browser.session(width: 420, height: 900) { browser in
                try await browser.open(invitation)
                try await browser.waitFor(text: "Set up your phone")
                try await CodeFlowBrowserTests.screenshot(browser, "invitation")
                var uri = try await browser.find("#enrollment-uri").text()
                if ZXingReader.isAvailable {
                    // What the phone's camera reads: the QR code as the browser draws it.
                    let decoded = try await ZXingReader.decode([try await browser.screenshot()])
                    uri = try #require(decoded.first?.first?.text, "no QR code on the page")
                }
                let (kit, _) = server.authenticator()
                _ = try await kit.enroll(uri: uri, deviceName: "Carol's phone", platform: .android)
                // The page notices and starts Carol's sign-in, her username filled in.
                let username = try await browser.waitFor(css: "#username[value='carol']", timeout: .seconds(30))
                #expect(try await username.property("value", as: String.self) == "carol")
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "Approve on your phone")
                let request = try #require(try await kit.pendingRequests().first)
                _ = try await kit.approve(try await kit.details(for: request))
                try await browser.waitForURL(where: { $0 == server.base + "/account" })
                try await browser.waitFor(text: "Carol's phone")
                #expect(try await browser.find("#username").text() == "carol")
            }
        }
    }

    @Test("A browser signed in as Alice opens Bob's invitation: the page says so, and Bob ends signed in as himself, Alice signed out")
    func invitationInABrowserSignedInAsSomeoneElse() async throws {
        try await TestServer.with(.sqlite) { server in
            let alice = try await server.enrolledUser("alice")
            let bobID = try await server.createUser("bob")
            let ticket = try await server.admin("POST", "/admin/v1/tenants/default/users/\(bobID)/enrollment-tickets")
            let invitation = try #require(ticket["invitation_url"] as? String)
            try await Browser.session(width: 420, height: 900) { browser in
                try await browser.open(server.base + "/account")
                try await browser.signInByPhone(alice)
                try await browser.waitFor(text: "Your phones")
                #expect(try await browser.find("#username").text() == "alice")

                try await browser.open(invitation)
                try await browser.waitFor(text: "This browser is signed in as alice. Signing in here as bob signs alice out of it.")
                let (kit, _) = server.authenticator()
                _ = try await kit.enroll(uri: try await browser.find("#enrollment-uri").text(), deviceName: "Bob's phone", platform: .android)
                _ = try await browser.waitFor(css: "#username[value='bob']", timeout: .seconds(30))
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "Approve on your phone")
                let bobRequest = try #require(try await kit.pendingRequests().first)
                _ = try await kit.approve(try await kit.details(for: bobRequest))
                try await browser.waitForURL(where: { $0 == server.base + "/account" })
                try await browser.waitFor(text: "Bob's phone")
                #expect(try await browser.find("#username").text() == "bob")
                #expect(try await browser.bodyText().contains("alice's phone") == false)
            }
        }
    }

    @Test("An invitation page left open past the invitation's expiry says what a reload says, and leaves no code to scan or button to press")
    func invitationPageLeftOpenPastItsExpiry() async throws {
        try await TestServer.with(.sqlite) { server in
            let userID = try await server.createUser("carol")
            let ticket = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
            let invitation = try #require(ticket["invitation_url"] as? String)
            try await Browser.session(width: 420, height: 900) { browser in
                try await browser.open(invitation)
                try await browser.waitFor(text: "Waiting for the phone…")
                server.clock.advance(by: EnrollmentTicket.defaultLifetime + 1)
                try await browser.waitFor(text: "This invitation has expired. Ask for a new one.", timeout: .seconds(30))
                #expect(try await browser.find("h1").text() == "This invitation cannot be used")
                #expect(try await browser.findAll("#enrollment-qr").isEmpty, "no QR code left to scan")
                #expect(try await browser.findAll("#done").isEmpty, "no button left to press")
                #expect(try await browser.bodyText().contains("Go back to your account") == false)

                try await browser.open(invitation)
                try await browser.waitFor(text: "This invitation has expired. Ask for a new one.")
                #expect(try await browser.find("h1").text() == "This invitation cannot be used")
                #expect(try await browser.findAll("#enrollment-qr").isEmpty)
            }
        }
    }
}
