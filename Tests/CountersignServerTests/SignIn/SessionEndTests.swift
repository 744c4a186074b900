import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// A browser session lasts no longer than what it was signed in with, and no longer than its
/// user's standing: removing the phone or passkey of the sign-in ends it, disabling the user
/// ends it for good, and taking a way in away needs a recent sign-in (ASVS 3.3.3, 3.7.1;
/// NIST SP 800-63B §6.2).
@Suite("Sessions end with their phone, their passkey or their user")
struct SessionEndTests {
    @Test("Removing the phone a session was signed in with ends it: the account page asks to sign in and no phone can be added",
          arguments: Engine.available)
    func removingTheSessionsPhoneEndsIt(engine: Engine) async throws {
        try await AccountBench.run(engine) { bench in
            let deleted = try await bench.server.admin("DELETE", "/admin/v1/tenants/default/devices/\(bench.deviceID)")
            #expect(deleted.status == 204)

            let enroll = try await bench.post("/account/enroll", [])
            #expect(enroll.status == 303 && enroll.header("Location") == "/account", "no ticket without a session")
            let page = try await bench.browser.get("/account")
            #expect(page.hidden("attempt") != nil && !page.text.contains("Your phones"), "the sign-in form, not the account")
            let ended = try await bench.audit("session.ended")
            #expect(ended.count == 1 && ended.first?["actor"] as? String == "system")
            #expect(try await bench.audit("enrollment_ticket.created").allSatisfy {
                $0["actor"] as? String != "user:\(bench.user.userID)"
            }, "no ticket issued by the user")
        }
    }

    @Test("Removing another of the user's phones leaves the session as it is")
    func removingAnotherPhoneKeepsIt() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let tablet = try await bench.server.enrollDevice(for: bench.user.userID, username: "alice", name: "Tablet")
            let deleted = try await bench.server.admin("DELETE", "/admin/v1/tenants/default/devices/\(tablet.enrollment.deviceID)")
            #expect(deleted.status == 204)
            #expect(try await bench.account().text.contains("Your phones"))
            #expect(try await bench.audit("session.ended").isEmpty)
        }
    }

    @Test("Disabling the user ends their session for good: enabling them again does not bring the cookie back")
    func disablingTheUserEndsItForGood() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let path = "/admin/v1/tenants/default/users/\(bench.user.userID)"
            #expect(try await bench.server.admin("PATCH", path, json: ["status": "disabled"]).status == 200)
            #expect(try await bench.server.admin("PATCH", path, json: ["status": "active"]).status == 200)

            let page = try await bench.browser.get("/account")
            #expect(page.hidden("attempt") != nil && !page.text.contains("Your phones"), "the sign-in form, not the account")
            let updates = try await bench.audit("user.updated")
            #expect(updates.contains { ($0["details"] as? [String: any Sendable])?["sessions_ended"] as? String == "1" },
                    "the disabling says it ended the session: \(updates)")
        }
    }

    @Test("A session signed in with a passkey ends when that passkey is removed", arguments: Engine.available)
    func removingTheSessionsPasskeyEndsIt(engine: Engine) async throws {
        try await PasskeyBench.run(engine) { bench in
            let passkey = try await bench.alicesPasskey(name: "Laptop")
            let browser = try await Self.signedIn(with: passkey, bench)
            #expect(try await browser.get("/account").text.contains("Your phones"), "signed in with the passkey")

            let id = try #require(try await bench.passkeys(of: bench.alice.user.userID).first?["id"] as? String)
            let removed = try await bench.server.admin("DELETE", "/admin/v1/tenants/default/users/\(bench.alice.user.userID)/passkeys/\(id)")
            #expect(removed.status == 204)
            let page = try await browser.get("/account")
            #expect(page.hidden("attempt") != nil && !page.text.contains("Your phones"), "the sign-in form, not the account")
            #expect(try await bench.alice.page().text.contains("Your phones"), "the session signed in by the phone stands")
        }
    }

    @Test("A session signed in with a passkey outlives the removal of the user's phone, and its page says there is none")
    func passkeySessionOutlivesThePhone() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let passkey = try await bench.alicesPasskey(name: "Laptop")
            let browser = try await Self.signedIn(with: passkey, bench)
            let phone = bench.alice.user.enrollment.deviceID
            #expect(try await bench.server.admin("DELETE", "/admin/v1/tenants/default/devices/\(phone)").status == 204)
            let page = try await browser.get("/account")
            #expect(page.text.contains(#"id="no-phones""#) && !page.text.contains(#"id="device-"#), "\(page.text.prefix(300))")
        }
    }

    @Test("Removing a phone needs a sign-in of the last ten minutes, as adding one does, and removes nothing before it")
    func removingAPhoneNeedsAFreshSignIn() async throws {
        try await AccountBench.run(.sqlite) { bench in
            bench.server.clock.advance(by: AccountFlow.freshSignIn + 1)
            _ = try await bench.account()          // the session is still live: it is used, not idle
            let page = try await bench.post("/account/devices/\(bench.deviceID)/remove", [("confirm", "yes")])
            #expect(page.hidden("attempt") != nil, "the username form of a new sign-in")
            #expect(page.text.contains(#"value="alice""#), "with the username filled in")
            #expect(try await bench.device(bench.deviceID)?.status == .active)
            #expect(try await bench.audit("device.unenrolled").isEmpty)
        }
    }

    @Test("Removing a passkey needs a sign-in of the last ten minutes, and removes nothing before it")
    func removingAPasskeyNeedsAFreshSignIn() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            _ = try await bench.alicesPasskey(name: "Laptop")
            let id = try #require(try await bench.passkeys(of: bench.alice.user.userID).first?["id"] as? String)
            bench.server.clock.advance(by: AccountFlow.freshSignIn + 1)
            _ = try await bench.alice.page()
            let page = try await bench.alice.post("/account/passkeys/\(id)/remove", [])
            #expect(page.hidden("attempt") != nil, "the username form of a new sign-in")
            #expect(try await bench.passkeys(of: bench.alice.user.userID).count == 1)
            #expect(try await bench.audit("passkey.removed").isEmpty)
        }
    }

    /// A new browser signed in to the account page with `passkey`, at the hosted sign-in.
    static func signedIn(with passkey: TestPasskey, _ bench: PasskeyBench) async throws -> AccountBrowser {
        let browser = bench.browser()
        let form = try await browser.get("/account")
        let signIn = HostedSignIn(browser: browser, page: form, attempt: try #require(form.hidden("attempt")), base: "")
        let done = try await signIn.signIn(with: passkey)
        #expect(done.status == 200, "\(done.text.prefix(500))")
        return browser
    }
}
