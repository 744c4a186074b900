import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The passkey section of the account page beyond adding one: forged and stale posts, names,
/// removing, and other people's passkeys.
@Suite("Passkeys on the account page: CSRF, fresh sign-in, rename, remove")
struct PasskeyAccountTests {
    @Test("The passkey calls and forms without the session's CSRF token are refused with 403 and change nothing",
          arguments: [nil, "forged-token"])
    func postsWithoutTheSessionsTokenChangeNothing(token: String?) async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let alice = bench.alice
            let passkey = try await bench.alicesPasskey(name: "Laptop")
            let id = try #require(try await bench.passkeys(of: alice.user.userID).first?["id"] as? String)
            let form = token.map { [("csrf", $0)] } ?? []

            let options = try await alice.browser.post("/account/passkeys/options", form + [("name", "Stolen")])
            #expect(options.status == 403 && options.error == "invalid_csrf_token", "\(options.text)")
            let asked = try await alice.creationOptions().decoded(CreationOptionsAnswer.self)
            var another = bench.passkey()
            let added = try await alice.add(ceremony: asked.ceremony, another.create(asked.publicKey), csrf: token ?? "")
            #expect(added.status == 403 && added.error == "invalid_csrf_token", "\(added.text)")
            for path in ["/account/passkeys/\(id)/rename", "/account/passkeys/\(id)/remove"] {
                let answer = try await alice.browser.post(path, form + [("name", "Taken over")])
                #expect(answer.status == 403 && answer.text.contains("invalid_csrf_token"), "\(path)")
            }
            let stored = try await bench.passkeys(of: alice.user.userID)
            #expect(stored.count == 1 && stored.first?["name"] as? String == "Laptop")
            #expect(stored.first?["credential_id"] as? String == passkey.credentialID)
        }
    }

    @Test("Adding a passkey needs a sign-in of the last ten minutes: a stale session is told login_required and where to sign in again")
    func addingAPasskeyNeedsAFreshSignIn() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let alice = bench.alice
            let asked = try await alice.creationOptions().decoded(CreationOptionsAnswer.self)
            bench.server.clock.advance(by: AccountFlow.freshSignIn + 1)
            _ = try await alice.page()      // the session is still live: it is used, not idle

            let options = try await alice.creationOptions()
            #expect(options.status == 401 && options.error == "login_required", "\(options.text)")
            #expect(options["redirect"] as? String == "/account/passkeys/sign-in-again")
            var passkey = bench.passkey()
            let added = try await alice.add(ceremony: asked.ceremony, passkey.create(asked.publicKey))
            #expect(added.status == 401 && added.error == "login_required", "\(added.text)")
            #expect(added["redirect"] as? String == "/account/passkeys/sign-in-again")
            #expect(try await bench.rows("passkeys") == 0)

            let again = try await alice.browser.get("/account/passkeys/sign-in-again")
            #expect(again.status == 200 && again.hidden("attempt") != nil, "a new sign-in")
            #expect(again.text.contains(#"value="alice""#), "with the username filled in")
        }
    }

    @Test("A name for a new passkey that cannot be one is refused before any ceremony")
    func addingWithABadName() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let answer = try await bench.alice.creationOptions(name: String(repeating: "x", count: 65))
            #expect(answer.status == 400 && answer.error == "invalid_name", "\(answer.text)")
            #expect(answer.errorDescription == "A name is at most 64 characters; this one has 65.")
            #expect(try await bench.rows("passkey_ceremonies") == 0)
        }
    }

    @Test("A user holds at most 25 passkeys: a 26th is refused with 409 too_many_passkeys, at the options and at the post, and not stored")
    func aUserHoldsAtMost25Passkeys() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            for _ in 1..<PasskeyService.maximumPerUser { _ = try await bench.alicesPasskey() }
            // Options asked for at 24, then the 25th added in another tab: the late post is refused.
            let early = try await bench.alice.creationOptions().decoded(CreationOptionsAnswer.self)
            #expect(early.publicKey.excludeCredentials.count == PasskeyService.maximumPerUser - 1)
            _ = try await bench.alicesPasskey()
            var one = bench.passkey()
            let late = try await bench.alice.add(ceremony: early.ceremony, one.create(early.publicKey))
            #expect(late.status == 409 && late.error == "too_many_passkeys", "\(late.text)")
            let refused = try await bench.alice.creationOptions()
            #expect(refused.status == 409 && refused.error == "too_many_passkeys", "\(refused.text)")
            #expect(try await bench.passkeys(of: bench.alice.user.userID).count == PasskeyService.maximumPerUser)
        }
    }

    @Test("A good name renames the passkey, audited as the user's")
    func renameAPasskey() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            _ = try await bench.alicesPasskey(name: "Laptop")
            let id = try #require(try await bench.passkeys(of: bench.alice.user.userID).first?["id"] as? String)
            let renamed = try await bench.alice.post("/account/passkeys/\(id)/rename", [("name", " YubiKey 5C ")])
            #expect(renamed.status == 303 && renamed.header("Location") == "/account")
            #expect(try await bench.passkeys(of: bench.alice.user.userID).first?["name"] as? String == "YubiKey 5C")
            #expect(try await bench.alice.page().text.contains("<h3>YubiKey 5C</h3>"))
            let events = try await bench.audit("passkey.renamed")
            #expect(events.count == 1 && events.first?["actor"] as? String == "user:\(bench.alice.user.userID)")
        }
    }

    @Test("A refused name is shown beside the passkey's field with what was typed, and changes nothing",
          arguments: [("", "Enter a name for the passkey."), ("   ", "Enter a name for the passkey."),
                      (String(repeating: "x", count: 65), "A name is at most 64 characters; this one has 65."),
                      ("Tab\there", "A name cannot contain control characters such as tabs or line breaks.")])
    func refusedNameKeepsWhatWasTyped(typed: String, message: String) async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            _ = try await bench.alicesPasskey(name: "Laptop")
            let id = try #require(try await bench.passkeys(of: bench.alice.user.userID).first?["id"] as? String)
            let page = try await bench.alice.post("/account/passkeys/\(id)/rename", [("name", typed)])
            #expect(page.status == 400)
            #expect(page.text.contains(#"value="\#(typed)" aria-invalid="true" aria-describedby="passkey-name-error-\#(id)""#),
                    "\(page.text)")
            #expect(page.text.contains(#"<p class="field-error" id="passkey-name-error-\#(id)">\#(message)</p>"#))
            #expect(try await bench.passkeys(of: bench.alice.user.userID).first?["name"] as? String == "Laptop")
            #expect(try await bench.audit("passkey.renamed").isEmpty)
        }
    }

    @Test("Removing a passkey takes it off the page and out of the admin API, audited as the user's; it signs in no more",
          arguments: Engine.available)
    func removeAPasskey(engine: Engine) async throws {
        try await PasskeyBench.run(engine) { bench in
            let alice = bench.alice
            let passkey = try await bench.alicesPasskey(name: "Laptop")
            let id = try #require(try await bench.passkeys(of: alice.user.userID).first?["id"] as? String)
            let removed = try await alice.post("/account/passkeys/\(id)/remove", [])
            #expect(removed.status == 303 && removed.header("Location") == "/account")
            #expect(try await bench.passkeys(of: alice.user.userID).isEmpty)
            let page = try await alice.page()
            #expect(!page.text.contains(#"id="passkey-\#(id)""#) && page.text.contains(#"id="no-passkeys""#))
            #expect(page.text.contains("Passkey removed: Laptop"))
            let events = try await bench.audit("passkey.removed")
            #expect(events.count == 1 && events.first?["actor"] as? String == "user:\(alice.user.userID)")
            #expect(events.first?["target_id"] as? String == id)

            let again = try await alice.post("/account/passkeys/\(id)/remove", [])
            #expect(again.status == 404 && again.text.contains("unknown_passkey"))
            let client = try await bench.server.createCodeFlowClient()
            let signIn = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            let refused = try await signIn.signIn(with: passkey)
            #expect(refused.status == 400 && refused.error == "unknown_credential", "\(refused.text)")
        }
    }

    @Test("Another user's passkey, or an unknown one, is not found on the account page, and nothing changes")
    func otherPeoplesPasskeysAreNotFound() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let bob = try await bench.signedIn(try await bench.server.enrolledUser("bob"))
            var bobs = bench.passkey()
            #expect(try await bob.register(&bobs, name: "Bob's key").status == 200)
            let id = try #require(try await bench.passkeys(of: bob.user.userID).first?["id"] as? String)
            for passkey in [id, "pk_unknown"] {
                let rename = try await bench.alice.post("/account/passkeys/\(passkey)/rename", [("name", "Mine now")])
                #expect(rename.status == 404 && rename.text.contains("unknown_passkey"), "\(passkey)")
                let remove = try await bench.alice.post("/account/passkeys/\(passkey)/remove", [])
                #expect(remove.status == 404 && remove.text.contains("unknown_passkey"), "\(passkey)")
            }
            #expect(try await bench.passkeys(of: bob.user.userID).first?["name"] as? String == "Bob's key")
            #expect(try await bench.audit("passkey.removed").isEmpty)
            #expect(try await bench.audit("passkey.renamed").isEmpty)
        }
    }
}
