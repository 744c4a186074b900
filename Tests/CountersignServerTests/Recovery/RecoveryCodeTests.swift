import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// Recovery codes, driven in memory (docs/recovery.md): alice makes a set on the account page
/// after signing in with her phone, loses the phone, signs in with a code in another browser
/// to a session that can only enroll, enrolls a new phone, signs in with it and makes a new
/// set, which ends the old codes.
@Suite("Recovery codes: made on the account page, a sign-in that only enrolls, and their limits")
struct RecoveryCodeTests {
    @Test("Lose the phone, sign in with a recovery code, enroll a new phone, sign in with it: a new set ends the old codes",
          arguments: Engine.available)
    func lostPhoneToNewPhone(engine: Engine) async throws {
        try await AccountBench.run(engine) { bench in
            #expect(try await bench.account().text.contains(#"id="no-recovery-codes""#))
            let codes = try await Self.makeCodes(bench)
            #expect(codes.count == 10 && Set(codes).count == 10)
            #expect(codes.allSatisfy { $0.wholeMatch(of: /[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}/) != nil })
            let account = try await bench.account()
            #expect(account.text.contains("10 of 10 unused, made "), "\(account.text)")
            #expect(!codes.contains { account.text.contains($0) }, "the account page never shows a code again")
            let created = try await bench.audit("recovery.codes_created")
            #expect(created.first?["actor"] as? String == "user:\(bench.user.userID)")

            // The phone is lost. In another browser, the sign-in page leads to recovery.
            let elsewhere = AccountBrowser(server: bench.server, send: bench.browser.send)
            let signInPage = try await elsewhere.get("/account")
            #expect(signInPage.text.contains(#"<a href="/account/recover">Lost your phone?</a>"#), "\(signInPage.text)")
            let recovered = try await Self.recover(elsewhere, username: "alice", code: codes[3].uppercased())
            #expect(recovered.status == 303 && recovered.header("Location") == bench.server.base + "/account",
                    "\(recovered.status) \(recovered.text.prefix(600))")
            let limited = try await elsewhere.get("/account")
            #expect(limited.text.contains("with a recovery code") && limited.text.contains(#"id="recovery-only""#))
            #expect(!limited.text.contains("/rename") && !limited.text.contains("recovery-codes") && !limited.text.contains("Recent activity"))
            let used = try await bench.audit("recovery.code_used")
            #expect(used.first?["actor"] as? String == "user:\(bench.user.userID)")
            #expect((used.first?["details"] as? [String: any Sendable])?["remaining"] as? String == "9")

            // It enrolls a new phone, and nothing else.
            let csrf = try #require(limited.hidden("csrf"))
            let rename = try await elsewhere.post("/account/devices/\(bench.deviceID)/rename", [("csrf", csrf), ("name", "Mine")])
            #expect(rename.status == 403 && rename.text.contains("recovery_session"))
            let remove = try await elsewhere.post("/account/devices/\(bench.deviceID)/remove", [("csrf", csrf), ("confirm", "yes")])
            #expect(remove.status == 403 && remove.text.contains("recovery_session"))
            let more = try await elsewhere.post("/account/recovery-codes", [("csrf", csrf)])
            #expect(more.status == 403 && more.text.contains("recovery_session"))
            #expect(try await bench.device(bench.deviceID)?.status == .active, "the lost phone stays until a full sign-in")
            let enroll = try await elsewhere.post("/account/enroll", [("csrf", csrf)])
            let uri = try #require(AccountBench.capture(#"<code id="enrollment-uri">([^<]+)</code>"#, in: enroll.text))
                .replacingOccurrences(of: "&amp;", with: "&")
            let (kit, _) = bench.server.authenticator()
            let enrollment = try await kit.enroll(uri: uri, deviceName: "New phone", platform: .android)

            // The new phone signs in to the account page, which makes a new set.
            let newPhone = EnrolledUser(userID: bench.user.userID, username: "alice", kit: kit, enrollment: enrollment,
                                        device: bench.user.device)
            let third = AccountBrowser(server: bench.server, send: bench.browser.send)
            #expect(try await AccountBench.signIn(third, user: newPhone, base: "").status == 303)
            let full = try await third.get("/account")
            #expect(full.text.contains("9 of 10 unused, made ") && full.text.contains("<h3>New phone</h3>"))
            let fresh = try await third.post("/account/recovery-codes", [("csrf", try #require(full.hidden("csrf")))])
            #expect(fresh.status == 200)
            let replaced = try await bench.audit("recovery.codes_created")
            #expect((replaced.first?["details"] as? [String: any Sendable])?["replaced"] as? String == "10")

            // The old codes, used or not, are gone; so is the session the old code opened.
            let fourth = AccountBrowser(server: bench.server, send: bench.browser.send)
            let old = try await Self.recover(fourth, username: "alice", code: codes[5])
            #expect(old.status == 400 && old.text.contains("The username or code is not right. 4 tries are left."))
            let ended = try await elsewhere.get("/account")
            #expect(ended.hidden("attempt") != nil && !ended.text.contains("recovery-only"),
                    "replacing the codes ended the session one of them opened")
        }
    }

    @Test("A recovery session answers no application: prompt=none gets login_required, and without it the phone is asked")
    func recoverySessionAnswersNoClient() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let codes = try await Self.makeCodes(bench)
            let client = try await bench.server.createCodeFlowClient()
            let elsewhere = AccountBrowser(server: bench.server, send: bench.browser.send)
            #expect(try await Self.recover(elsewhere, username: "alice", code: codes[0]).status == 303)
            let query = TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            let silent = try await elsewhere.get("/authorize" + query + "&prompt=none")
            #expect(silent.status == 303 && silent.redirectParameters["error"] == "login_required", "\(silent.status)")
            let asked = try await elsewhere.get("/authorize" + query)
            #expect(asked.status == 200 && asked.hidden("attempt") != nil && asked.redirectParameters["code"] == nil)
        }
    }

    @Test("A used code is refused; wrong tries count down per username, known or not, and then even the right code waits")
    func wrongTriesAreCountedAndLimited() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let codes = try await Self.makeCodes(bench)
            let browser = AccountBrowser(server: bench.server, send: bench.browser.send)
            #expect(try await Self.recover(browser, username: "alice", code: codes[0]).status == 303)
            let again = AccountBrowser(server: bench.server, send: bench.browser.send)
            let reused = try await Self.recover(again, username: "alice", code: codes[0])
            #expect(reused.status == 400 && reused.text.contains("The username or code is not right. 4 tries are left."))
            for left in [3, 2, 1] {
                let wrong = try await Self.recover(again, username: "alice", code: "0000-0000-0000")
                #expect(wrong.text.contains("\(left) \(left == 1 ? "try is" : "tries are") left."), "\(left)")
            }
            let last = try await Self.recover(again, username: "ALICE", code: "zzzz-zzzz-zzzz")
            #expect(last.text.contains("No tries are left: wait 15 minutes before the next."))
            let waiting = try await Self.recover(again, username: "alice", code: codes[1])
            #expect(waiting.status == 429 && waiting.text.contains("Try again in 15 minutes."), "\(waiting.text.components(separatedBy: "code-error").last ?? "")")

            // An unknown username reads the same, and has its own count.
            let nobody = try await Self.recover(again, username: "mallory", code: codes[1])
            #expect(nobody.status == 400 && nobody.text.contains("The username or code is not right. 4 tries are left."))
            // Not a code at all: said precisely, and not counted.
            let malformed = try await Self.recover(again, username: "mallory", code: "hunter2")
            #expect(malformed.status == 400 && malformed.text.contains("This is neither a recovery code"))
            let empty = try await Self.recover(again, username: "mallory", code: "  ")
            #expect(empty.status == 400 && empty.text.contains("Enter a recovery code or a temporary access pass."))
            let counted = try await Self.recover(again, username: "mallory", code: codes[2])
            #expect(counted.text.contains("3 tries are left."))

            bench.server.clock.advance(by: RecoveryService.failureWindow + 1)
            let later = try await Self.recover(again, username: "alice", code: codes[1])
            #expect(later.status == 303, "the wait is over: \(later.text.prefix(400))")

            let metrics = String(decoding: try await bench.server.call("GET", "/metrics").data, as: UTF8.self)
            for line in [#"countersign_recovery_checks_total{kind="code",outcome="signed_in"} 2"#,
                         #"countersign_recovery_checks_total{kind="code",outcome="refused"} 7"#,
                         #"countersign_recovery_checks_total{kind="code",outcome="throttled"} 1"#,
                         #"countersign_recovery_checks_total{kind="unknown",outcome="malformed"} 1"#] {
                #expect(metrics.contains(line), "\(line)")
            }
            let activity = try await bench.account()
            #expect(activity.text.contains("Signed in with a recovery code") && activity.text.contains("Recovery codes made"))
        }
    }

    @Test("Wrong tries sent at once for one username: no more than five are checked, the rest wait")
    func triesSentAtOnceKeepTheLimit() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let browser = bench.newBrowser()
            let form = try await browser.get("/account/recover")
            let attempt = try #require(form.hidden("attempt"))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        try await browser.post("/account/recover", [
                            ("attempt", attempt), ("username", "alice"), ("code", String(format: "0000-0000-%04d", index)),
                        ]).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 400 }.count <= RecoveryService.failuresPerUsername, "\(statuses.sorted())")
            #expect(statuses.filter { $0 == 429 }.count >= 12 - RecoveryService.failuresPerUsername, "\(statuses.sorted())")
        }
    }

    @Test("A recovery session lasts 15 minutes at most")
    func recoverySessionIsShort() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let codes = try await Self.makeCodes(bench)
            let browser = AccountBrowser(server: bench.server, send: bench.browser.send)
            #expect(try await Self.recover(browser, username: "alice", code: codes[0]).status == 303)
            bench.server.clock.advance(by: 600)
            #expect(try await browser.get("/account").text.contains("recovery-only"))
            bench.server.clock.advance(by: TimeInterval(RecoveryService.sessionLifetime - 600 + 1))
            #expect(try await browser.get("/account").hidden("attempt") != nil)
        }
    }

    @Test("New codes need a sign-in of the last ten minutes; the page says how many are left and when all are used")
    func makingCodesNeedsAFreshSignIn() async throws {
        try await AccountBench.run(.sqlite) { bench in
            bench.server.clock.advance(by: AccountFlow.freshSignIn + 1)
            _ = try await bench.account()
            let page = try await bench.post("/account/recovery-codes", [])
            #expect(page.hidden("attempt") != nil && page.text.contains(#"value="alice""#), "a new sign-in")
            #expect(try await bench.audit("recovery.codes_created").isEmpty)
            let forged = try await bench.browser.post("/account/recovery-codes", [("csrf", "forged")])
            #expect(forged.status == 403 && forged.text.contains("invalid_csrf_token"))
        }
    }

    @Test("The saved text file holds every code shown")
    func theDownloadHoldsTheCodes() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let page = try await bench.post("/account/recovery-codes", [])
            let href = try #require(AccountBench.capture(#"<a href="data:text/plain;charset=utf-8,([^"]+)" download="recovery-codes-default.txt""#,
                                                         in: page.text))
            let text = try #require(href.replacingOccurrences(of: "&#37;", with: "%").removingPercentEncoding)
            let codes = Self.codes(in: page.text)
            #expect(codes.count == 10 && codes.allSatisfy { text.contains($0 + "\n") }, "\(text)")
            #expect(text.hasPrefix("Recovery codes for alice at "))
        }
    }

    @Test("The recovery form focuses the username, or the code when the username is filled in")
    func theFormFocusesWhatIsMissing() async throws {
        try await TestServer.routed { server in
            let browser = AccountBrowser(server: server, send: { try await server.send($0) })
            let empty = try await browser.get("/account/recover")
            #expect(empty.text.contains(#"value="" autofocus required>"#) && !empty.text.contains(#"spellcheck="false" autofocus required>"#),
                    "\(empty.text)")
            let named = try await browser.get("/account/recover?username=alice")
            #expect(named.text.contains(#"value="alice" required>"#) && named.text.contains(#"spellcheck="false" autofocus required>"#),
                    "\(named.text)")
        }
    }

    // MARK: - Parts

    /// Makes a set on alice's account page and returns the codes shown.
    static func makeCodes(_ bench: AccountBench) async throws -> [String] {
        let page = try await bench.post("/account/recovery-codes", [])
        #expect(page.status == 200, "\(page.text.prefix(600))")
        #expect(page.header("Cache-Control") == "no-store")
        return codes(in: page.text)
    }

    static func codes(in html: String) -> [String] {
        html.matches(of: /<li><code>([^<]+)<\/code><\/li>/).map { String($0.output.1) }
    }

    /// The recovery form in `browser`, posted with `username` and `code`.
    static func recover(_ browser: AccountBrowser, username: String, code: String) async throws -> TestServer.Answer {
        let form = try await browser.get("/account/recover?username=\(username)")
        #expect(form.status == 200 && form.text.contains("Sign in without your phone"), "\(form.text.prefix(500))")
        let attempt = try #require(form.hidden("attempt"))
        return try await browser.post("/account/recover", [("attempt", attempt), ("username", username), ("code", code)])
    }
}
