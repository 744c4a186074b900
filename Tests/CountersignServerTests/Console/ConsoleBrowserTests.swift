import CountersignKit
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// The console in real Chromium against a listening server, the administrator's phone and the
/// new user's phone being SDK enrollments. With `COUNTERSIGN_SCREENSHOTS=1` the pages are saved
/// to `docs/screenshots/`.
@Suite("Console in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct ConsoleBrowserTests {
    @Test("An administrator signs in by approving on the phone, creates a user and an invitation, a phone enrolls from the QR code on the screen, the APNs key and certificate files are uploaded, a client registered in the console asks it, the audit log, the request's page, the devices and the dashboard show it, and the policy is set",
          .enabled(if: ZXingReader.isAvailable, "python3 with zxingcpp and Pillow is not available"))
    func signInCreateUserInviteEnrollRegisterClientAndSeeTheRequest() async throws {
        try await TestServer.with(.sqlite) { server in
            let admin = try await server.enrolledUser("root")
            let granted = try await server.admin(
                "PUT", "/admin/v1/tenants/default/users/\(admin.userID)/console-role", json: ["role": "system-admin"])
            #expect(granted.status == 200, "\(granted.errorDescription ?? "")")
            let browser = try await Browser.start(width: 1280, height: 900)
            do {
                try await browser.open(server.base + "/console")
                try await browser.waitFor(text: "to continue to Countersign console")
                try await browser.signInByPhone(admin)
                _ = try await browser.waitForURL(where: { $0.hasSuffix("/console") })
                try await browser.waitFor(text: "Signed in as root, system administrator")

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
                let symbols = try await ZXingReader.decode([try await browser.screenshot()])
                let scanned = try #require(symbols.first?.first?.text, "no QR code on the screen")
                let (kit, _) = server.authenticator()
                _ = try await kit.enroll(uri: scanned, deviceName: "Carol's phone", platform: .linux)
                // The invitation was the answer to a form; the user's page is its address without it.
                let invitationPage = try await browser.currentURL()
                try await browser.open(String(invitationPage.dropLast("/invitations".count)))
                try await browser.waitFor(text: "Carol's phone")
                try await CodeFlowBrowserTests.screenshot(browser, "console-user")

                // The tenant's APNs token key: the .p8 file chosen in the file input and uploaded.
                let files = FileManager.default.temporaryDirectory.appendingPathComponent("console-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: files) }
                let p8 = files.appendingPathComponent("AuthKey_ABC123DEFG.p8")
                try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: p8)
                try await browser.open(server.base + "/console/push")
                try await browser.find("#key_id").type("ABC123DEFG")
                try await browser.find("#team_id").type("TEAM123456")
                try await browser.find("#topic").type("com.example.bank")
                try await browser.find("#private_key_file").type(p8.path)
                try await browser.find("#set-apns-token").click()
                _ = try await browser.waitFor(css: "#credential-apns-token")
                #expect(try await browser.bodyText().contains("in use"))
                // An APNs certificate for one app, its .p12 uploaded with its password.
                if let pki = PushTestPKI.shared {
                    let p12 = files.appendingPathComponent("bank-ios.p12")
                    try pki.clientPKCS12(commonName: "Apple Push Services: com.example.bank", topic: "com.example.bank",
                                         password: "s3cret").write(to: p12)
                    try await browser.find("#client_app_key").type("bank-ios")
                    try await browser.find("#certificate_topic").type("com.example.bank")
                    try await browser.find("#certificate_file").type(p12.path)
                    try await browser.find("#password").type("wrong")
                    try await browser.find("#set-apns-certificate").click()
                    _ = try await browser.waitFor(css: "#certificate-error")
                    #expect(try await browser.find("#client_app_key").property("value", as: String.self) == "bank-ios")
                    try await browser.find("#certificate_file").type(p12.path)
                    try await browser.find("#password").type("s3cret")
                    try await browser.find("#set-apns-certificate").click()
                    _ = try await browser.waitFor(css: "#credential-apns-certificate")
                    #expect(try await browser.bodyText().contains("Apple Push Services: com.example.bank"))
                }
                try await CodeFlowBrowserTests.screenshot(browser, "console-push")

                // A client registered in the console asks Carol's phone; the audit log and the
                // dashboard show it.
                try await browser.open(server.base + "/console/clients")
                try await browser.find("#name").type("Online banking")
                try await browser.find("#register-client").click()
                let secret = try await browser.waitFor(css: "#client-secret").text()
                let clientID = try await browser.find("#client-id").text()
                try await CodeFlowBrowserTests.screenshot(browser, "console-client")
                let authReqID = try await server.startApproval(TestClient(id: clientID, secret: secret), user: "carol")
                let pending = try #require(try await kit.pendingRequests().first)
                _ = try await kit.approve(try await kit.details(for: pending))
                #expect(try await server.token(TestClient(id: clientID, secret: secret), authReqID).status == 200)
                try await browser.open(server.base + "/console/audit?action=approval.approved")
                try await browser.waitFor(text: "approval.approved")
                #expect(try await browser.find("a.actor[href*='#device-']").text() == "Carol's phone", "the phone is the actor of its approval")
                try await CodeFlowBrowserTests.screenshot(browser, "console-audit")
                // The request's own page, from the audit log: Carol's phone answered it.
                try await browser.find("a[href^='/console/requests/txn_']").click()
                try await browser.waitFor(text: "Carol's phone")
                #expect(try await browser.find("#request-status").text() == "approved")
                try await CodeFlowBrowserTests.screenshot(browser, "console-request")

                // Every device of the tenant, with its user.
                try await browser.open(server.base + "/console/devices")
                try await browser.waitFor(text: "Carol's phone")
                #expect(try await browser.bodyText().contains("carol"))
                try await CodeFlowBrowserTests.screenshot(browser, "console-devices")

                // The policy: a number out of range is shown beside its field; then a floor of PIN.
                try await browser.open(server.base + "/console/policies")
                try await browser.find("#pin_attempt_limit").clear()
                try await browser.find("#pin_attempt_limit").type("11")
                try await browser.find("#save-policy").click()
                _ = try await browser.waitFor(css: "#pin_attempt_limit-error")
                #expect(try await browser.find("#pin_attempt_limit").property("value", as: String.self) == "11")
                try await browser.find("#pin_attempt_limit").clear()
                try await browser.find("#pin_attempt_limit").type("5")
                try await browser.find("#minimum_acr option[value='urn:countersign:acr:pin']").click()
                try await browser.find("#save-policy").click()
                try await browser.waitFor(text: "The policy is saved.")
                let policy = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
                #expect(policy["minimum_acr"] as? String == "urn:countersign:acr:pin" && policy["pin_attempt_limit"] as? Int == 5)
                try await CodeFlowBrowserTests.screenshot(browser, "console-policies")
                try await browser.open(server.base + "/console")
                #expect(try await browser.find("#total-requests").text() == "2", "root's sign-in and Carol's request")
                #expect(try await browser.find("#total-approved").text() == "2")
                try await CodeFlowBrowserTests.screenshot(browser, "console-dashboard")

                // At phone width the lists are one column: no page is wider than the screen.
                try await browser.windowSize(width: 390, height: 844)
                for section in ["", "/users", "/devices", "/clients", "/push", "/policies", "/audit", "/users/\(admin.userID)"] {
                    try await browser.open(server.base + "/console" + section)
                    _ = try await browser.waitFor(css: "main.page h1")
                    let fits: Bool = try await browser.execute(
                        script: "return document.documentElement.scrollWidth <= window.innerWidth + 1")
                    #expect(fits, "/console\(section) is wider than a phone's screen")
                }
                try await browser.open(server.base + "/console/users")
                try await browser.waitFor(text: "Create a user")
                try await CodeFlowBrowserTests.screenshot(browser, "console-users-phone")
            } catch {
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
    }

    @Test("An administrator of one tenant sees only that tenant's users, and another tenant's console asks them to sign in there")
    func tenantAdministratorSeesOnlyTheirTenant() async throws {
        try await TestServer.with(.sqlite) { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            let admin = try await server.enrolledUser("ada", tenant: "acme")
            _ = try await server.createUser("mallory")
            #expect(try await server.admin(
                "PUT", "/admin/v1/tenants/acme/users/\(admin.userID)/console-role", json: ["role": "tenant-admin"]).status == 200)
            let browser = try await Browser.start(width: 1280, height: 900)
            do {
                try await browser.open(server.base + "/t/acme/console")
                try await browser.signInByPhone(admin)
                _ = try await browser.waitForURL(where: { $0.hasSuffix("/t/acme/console") })
                try await browser.open(server.base + "/t/acme/console/users")
                try await browser.waitFor(text: "ada")
                #expect(try await !browser.bodyText().contains("mallory"))
                // The default tenant's console is another relying party: it starts its own sign-in.
                try await browser.open(server.base + "/console/users")
                try await browser.waitFor(text: "to continue to Countersign console")
                #expect(try await browser.currentURL().contains("/authorize?"))
            } catch {
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
    }
}
