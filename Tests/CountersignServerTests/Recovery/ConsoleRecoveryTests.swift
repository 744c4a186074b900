import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The console's recovery panel, driven in memory: an administrator issues a temporary access
/// pass (shown once), sees it used, revokes it, and sees and revokes a user's recovery codes.
@Suite("Console: temporary access passes and recovery codes")
struct ConsoleRecoveryTests {
    @Test("Issue a pass, shown once; the user signs in with it; the list shows its use; revoke it; a refused network is said beside its field")
    func accessPassFromTheConsole() async throws {
        try await ConsoleTests.signedIn { bench in
            let gil = try await bench.server.enrolledUser("gil")
            let page = try await bench.browser.get("/console/users/\(gil.userID)")
            #expect(page.text.contains(#"id="no-passes""#) && page.text.contains("gil has made no recovery codes."))

            let refused = try await bench.post("/console/users/\(gil.userID)/access-passes",
                                               [("lifetime_seconds", "3600"), ("allowed_networks", "10.0.0.0/8\nvpn")])
            #expect(refused.status == 400 && refused.text.contains(#"id="pass-networks-error""#), "\(refused.text.suffix(2500))")
            #expect(refused.text.contains("10.0.0.0/8\nvpn</textarea>"), "what was typed stays")
            #expect(refused.text.contains(#"id="no-passes""#), "nothing was issued")

            let issued = try await bench.post("/console/users/\(gil.userID)/access-passes",
                                              [("lifetime_seconds", "86400"), ("reusable", "yes")])
            #expect(issued.status == 200)
            let code = try #require(AccountBench.capture(#"<code id="issued-pass-code">([^<]+)</code>"#, in: issued.text))
            #expect(issued.text.contains("It works any number of times from"))
            #expect(issued.text.contains("/account/recover"))
            let again = try await bench.browser.get("/console/users/\(gil.userID)")
            #expect(!again.text.contains(code), "shown only once")
            let id = try #require(AccountBench.capture(#"<tr id="pass-(tap_[^"]+)"><td>Reusable</td><td>active</td>"#, in: again.text),
                                  "\(again.text.suffix(3000))")

            let person = AccountBrowser(server: bench.server, send: bench.browser.send)
            #expect(try await RecoveryCodeTests.recover(person, username: "gil", code: code).status == 303)
            let used = try await bench.browser.get("/console/users/\(gil.userID)")
            #expect(used.text.contains("<td>1</td>"), "one use")

            let revoked = try await bench.post("/console/users/\(gil.userID)/access-passes/\(id)/revoke", [])
            #expect(revoked.status == 200 && revoked.text.contains("The temporary access pass is revoked."))
            #expect(revoked.text.contains(#"<tr id="pass-\#(id)"><td>Reusable</td><td>revoked</td>"#))
            #expect(!revoked.text.contains("revoke-pass-\(id)"))
            let twice = try await bench.post("/console/users/\(gil.userID)/access-passes/\(id)/revoke", [])
            #expect(twice.status == 409 && twice.text.contains("is already revoked"))
        }
    }

    @Test("The user page says how many recovery codes are left, and revokes them")
    func recoveryCodesFromTheConsole() async throws {
        try await ConsoleTests.signedIn { bench in
            // The administrator's own codes, made on their account page.
            let account = AccountBrowser(server: bench.server, send: bench.browser.send)
            #expect(try await AccountBench.signIn(account, user: bench.admin, base: "").status == 303)
            let csrf = try #require(try await account.get("/account").hidden("csrf"))
            let made = try await account.post("/account/recovery-codes", [("csrf", csrf)])
            #expect(RecoveryCodeTests.codes(in: made.text).count == 10)

            let shown = try await bench.browser.get("/console/users/\(bench.admin.userID)")
            #expect(shown.text.contains("Recovery codes: 10 of 10 unused, made "), "\(shown.text.suffix(3000))")
            let revoked = try await bench.post("/console/users/\(bench.admin.userID)/recovery-codes/revoke", [])
            #expect(revoked.status == 200 && revoked.text.contains("The recovery codes are revoked"))
            #expect(revoked.text.contains("root has made no recovery codes."))
            let none = try await bench.post("/console/users/\(bench.admin.userID)/recovery-codes/revoke", [])
            #expect(none.status == 404 && none.text.contains("Recovery codes of user"))
        }
    }
}
