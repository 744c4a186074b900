import CountersignCore
import CountersignWebAuthn
import Foundation
import Testing
@testable import CountersignServer

/// Passkeys end to end, driven in memory: a person adds one on the account page, then signs in
/// with it at the hosted page of the code flow, the test playing the page's script and the
/// authenticator (`PasskeyHarness`). Where storage matters, on both engines.
@Suite("Passkeys: registering on the account page, signing in at the hosted page")
struct PasskeyFlowTests {
    // MARK: - Registering

    @Test("A passkey added on the account page is listed there and in the admin API, and audited as the user's",
          arguments: Engine.available)
    func addAPasskeyOnTheAccountPage(engine: Engine) async throws {
        try await PasskeyBench.run(engine) { bench in
            let alice = bench.alice.user
            var passkey = bench.passkey()
            let added = try await bench.alice.register(&passkey, name: "  Work laptop  ")
            #expect(added.status == 200, "\(added.text.prefix(500))")
            #expect(added["redirect"] as? String == "/account")

            let listed = try await bench.passkeys(of: alice.userID)
            #expect(listed.count == 1)
            let record = try #require(listed.first)
            let id = try #require(record["id"] as? String)
            #expect(id.hasPrefix("pk_"))
            #expect(record["name"] as? String == "Work laptop")
            #expect(record["user_id"] as? String == alice.userID)
            #expect(record["credential_id"] as? String == passkey.credentialID)
            #expect(record["algorithm"] as? String == "ES256")
            #expect(record["attestation_format"] as? String == "none")
            #expect(record["user_verified"] as? Bool == true && record["backup_eligible"] as? Bool == false)
            #expect(record["public_key"] == nil, "the key is never shown")

            let page = try await bench.alice.page()
            #expect(page.text.contains(#"id="passkey-\#(id)""#) && page.text.contains("<h3>Work laptop</h3>"))
            #expect(page.text.contains("Device-bound passkey") && !page.text.contains(#"id="no-passkeys""#))
            #expect(page.text.contains("Passkey added: Work laptop"), "the recent activity says so")
            #expect(page.text.contains(#"<script src="/assets/passkey.js" defer></script>"#), "the button's script is loaded")

            let events = try await bench.audit("passkey.registered")
            #expect(events.count == 1)
            #expect(events.first?["actor"] as? String == "user:\(alice.userID)")
            #expect(events.first?["target_id"] as? String == id)
        }
    }

    @Test("Creation options ask for a discoverable credential of ES256, EdDSA or RS256 with a fresh 32-byte challenge each time, for the same opaque user handle, excluding the user's passkeys")
    func creationOptions() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let first = try await bench.alice.creationOptions()
            #expect(first.status == 200)
            #expect(first.header("Cache-Control") == "no-store")
            let options = try first.decoded(CreationOptionsAnswer.self).publicKey
            #expect(options.rp.id == "countersign.test")
            #expect(options.user.name == "alice")
            #expect(!options.user.id.bytes.isEmpty && options.user.id.bytes != Array(bench.alice.user.userID.utf8),
                    "the user handle is random, never the user id")
            #expect(options.pubKeyCredParams.map(\.alg) == [-7, -8, -257])
            #expect(options.challenge.bytes.count == 32)
            #expect(options.authenticatorSelection?.residentKey == "required")
            #expect(options.authenticatorSelection?.requireResidentKey == true)
            #expect(options.authenticatorSelection?.userVerification == "preferred")
            #expect(options.attestation == "none")
            #expect(options.timeout == 300_000)
            #expect(options.excludeCredentials.isEmpty)

            let passkey = try await bench.alicesPasskey()
            let second = try await bench.alice.creationOptions().decoded(CreationOptionsAnswer.self).publicKey
            #expect(second.excludeCredentials.map(\.id.base64URL) == [passkey.credentialID])
            #expect(second.challenge != options.challenge)
            #expect(second.user.id == options.user.id)
        }
    }

    @Test("A refused registration stores nothing and spends its ceremony: the same ceremony with a valid credential is challenge_not_found",
          arguments: Engine.available)
    func refusedRegistrationSpendsItsCeremony(engine: Engine) async throws {
        try await PasskeyBench.run(engine) { bench in
            let asked = try await bench.alice.creationOptions().decoded(CreationOptionsAnswer.self)
            var passkey = bench.passkey()
            let refused = try await bench.alice.add(
                ceremony: asked.ceremony, passkey.create(asked.publicKey) { $0.rpIDHash = Array(repeating: 7, count: 32) })
            #expect(refused.status == 400 && refused.error == "rp_id_mismatch", "\(refused.text)")
            let replayed = try await bench.alice.add(ceremony: asked.ceremony, passkey.create(asked.publicKey))
            #expect(replayed.status == 400 && replayed.error == "challenge_not_found", "\(replayed.text)")
            #expect(try await bench.passkeys(of: bench.alice.user.userID).isEmpty)
            #expect(try await bench.rows("passkeys") == 0)
            #expect(try await bench.audit("passkey.registered").isEmpty)
        }
    }

    @Test("A registration ceremony belongs to the session that asked for it: another session's post is challenge_not_found, and spends it")
    func registrationCeremonyBelongsToItsSession() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let bob = try await bench.signedIn(try await bench.server.enrolledUser("bob"))
            let asked = try await bench.alice.creationOptions().decoded(CreationOptionsAnswer.self)
            var passkey = bench.passkey()
            let credential = passkey.create(asked.publicKey)
            let stolen = try await bob.add(ceremony: asked.ceremony, credential)
            #expect(stolen.status == 400 && stolen.error == "challenge_not_found", "\(stolen.text)")
            let late = try await bench.alice.add(ceremony: asked.ceremony, credential)
            #expect(late.status == 400 && late.error == "challenge_not_found", "\(late.text)")
            #expect(try await bench.rows("passkeys") == 0)
        }
    }

    @Test("A credential registered once is refused again, for another user and in another tenant: credential_exists, nothing stored",
          arguments: Engine.available)
    func aCredentialIsRegisteredOnce(engine: Engine) async throws {
        try await PasskeyBench.run(engine) { bench in
            let server = bench.server
            let passkey = try await bench.alicesPasskey()
            let bob = try await bench.signedIn(try await server.enrolledUser("bob"))
            var copy = passkey
            let again = try await bob.register(&copy)
            #expect(again.status == 400 && again.error == "credential_exists", "\(again.text)")
            #expect(try await bench.passkeys(of: bob.user.userID).isEmpty)

            let created = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme Bank"])
            #expect(created.status == 201)
            let carol = try await bench.signedIn(try await server.enrolledUser("carol", tenant: "acme"), base: "/t/acme")
            var another = passkey
            let elsewhere = try await carol.register(&another)
            #expect(elsewhere.status == 400 && elsewhere.error == "credential_exists", "\(elsewhere.text)")
            #expect(try await bench.passkeys(of: carol.user.userID, tenant: "acme").isEmpty)

            #expect(try await bench.rows("passkeys") == 1)
            #expect(try await bench.audit("passkey.registered").count == 1)
            #expect(try await bench.audit("passkey.registered", tenant: "acme").isEmpty)
        }
    }

    // MARK: - Signing in

    @Test("A passkey signs in at the hosted page without a username: the code's ID token has acr passkey and amr hwk, user, mfa; the use is recorded",
          arguments: Engine.available)
    func signInWithAPasskey(engine: Engine) async throws {
        try await PasskeyBench.run(engine) { bench in
            let alice = bench.alice.user
            let client = try await bench.server.createCodeFlowClient()
            var passkey = try await bench.alicesPasskey(signCount: 1)
            let verifier = CodeFlowClient.verifier()
            let signIn = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(verifier))
            #expect(signIn.page.text.contains(#"id="passkey-sign-in""#))
            #expect(signIn.page.text.contains(#"<script src="/assets/passkey.js" defer></script>"#))

            let asked = try await signIn.requestOptions()
            #expect(asked.status == 200)
            let answer = try asked.decoded(RequestOptionsAnswer.self)
            let options = answer.publicKey
            #expect(options.allowCredentials.isEmpty, "usernameless: the browser offers its discoverable passkeys")
            #expect(options.rpId == PasskeyBench.relyingPartyID(of: bench.server) && options.userVerification == "preferred")
            #expect(options.challenge.bytes.count == 32)

            passkey.signCount = 2
            let done = try await signIn.finish(ceremony: answer.ceremony, passkey.get(options))
            #expect(done.status == 200, "\(done.text.prefix(500))")
            let redirect = done["redirect"] as? String
            #expect(redirect?.hasPrefix(client.redirectURI + "?") == true)
            #expect(PasskeyBench.parameters(of: redirect)["state"] == "xyz")
            #expect(done.header("Set-Cookie")?.contains("countersign-session=") == true)
            #expect(await signIn.browser.hasSession)

            let token = try await bench.idToken(of: redirect, client: client, verifier: verifier)
            #expect(token.sub == alice.userID)
            #expect(token.acr == "urn:countersign:acr:passkey")
            #expect(token.amr == ["hwk", "user", "mfa"])

            let used = try await bench.audit("passkey.used")
            #expect(used.count == 1 && used.first?["actor"] as? String == "user:\(alice.userID)")
            let record = try #require(try await bench.passkeys(of: alice.userID).first)
            #expect(record["sign_count"] as? Int == 2)
            #expect(record["last_used_at"] as? String != nil)
            #expect(record["clone_warning_at"] == nil)
        }
    }

    @Test("What a passkey sign-in claims follows the authenticator",
          arguments: [
            (true, true, "urn:countersign:acr:passkey", ["swk", "user", "mfa"]),
            (false, false, "urn:countersign:acr:confirm", ["hwk", "user"]),
            (true, false, "urn:countersign:acr:confirm", ["swk", "user"]),
          ])
    func claimsFollowTheAuthenticator(synced: Bool, verified: Bool, acr: String, amr: [String]) async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let client = try await bench.server.createCodeFlowClient()
            let passkey = try await bench.alicesPasskey(backupEligible: synced)
            let verifier = CodeFlowClient.verifier()
            let signIn = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(verifier))
            let done = try await signIn.signIn(with: passkey) { if !verified { $0.flags.remove(.userVerified) } }
            #expect(done.status == 200, "\(done.text.prefix(500))")
            let token = try await bench.idToken(of: done["redirect"] as? String, client: client, verifier: verifier)
            #expect(token.acr == acr)
            #expect(token.amr == amr)
        }
    }

    @Test("A refused assertion signs nobody in and spends its ceremony: the same ceremony with a valid assertion is challenge_not_found",
          arguments: Engine.available)
    func refusedAssertionSpendsItsCeremony(engine: Engine) async throws {
        try await PasskeyBench.run(engine) { bench in
            let client = try await bench.server.createCodeFlowClient()
            let passkey = try await bench.alicesPasskey()
            let sessions = try await bench.rows("browser_sessions")
            let signIn = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            let asked = try await signIn.requestOptions().decoded(RequestOptionsAnswer.self)

            let refused = try await signIn.finish(
                ceremony: asked.ceremony, passkey.get(asked.publicKey) { $0.origin = "https://countersign.example" })
            #expect(refused.status == 400 && refused.error == "origin_not_allowed", "\(refused.text)")
            let replayed = try await signIn.finish(ceremony: asked.ceremony, passkey.get(asked.publicKey))
            #expect(replayed.status == 400 && replayed.error == "challenge_not_found", "\(replayed.text)")
            #expect(replayed.header("Set-Cookie") == nil)
            #expect(await !signIn.browser.hasSession)
            #expect(try await bench.rows("browser_sessions") == sessions)
            #expect(try await bench.rows("authorization_codes") == 0)
            #expect(try await bench.audit("passkey.used").isEmpty)
            #expect(try await bench.passkeys(of: bench.alice.user.userID).first?["last_used_at"] == nil)

            let retried = try await signIn.signIn(with: passkey)
            #expect(retried.status == 200, "the attempt is still open for a new ceremony: \(retried.text)")
        }
    }

    @Test("A ceremony handle posted from another browser is challenge_not_found, and is spent for its own browser too")
    func aCeremonyBelongsToItsBrowser() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let client = try await bench.server.createCodeFlowClient()
            let passkey = try await bench.alicesPasskey()
            let mine = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            let asked = try await mine.requestOptions().decoded(RequestOptionsAnswer.self)
            let credential = passkey.get(asked.publicKey)

            let other = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            #expect(await other.browser.browserMark != mine.browser.browserMark)
            let stolen = try await other.finish(ceremony: asked.ceremony, credential)
            #expect(stolen.status == 400 && stolen.error == "challenge_not_found", "\(stolen.text)")
            let mineAgain = try await mine.finish(ceremony: asked.ceremony, credential)
            #expect(mineAgain.status == 400 && mineAgain.error == "challenge_not_found", "\(mineAgain.text)")

            // Nor may the other browser finish this browser's attempt.
            let fresh = try await mine.requestOptions().decoded(RequestOptionsAnswer.self)
            let elsewhere = try await other.finish(ceremony: fresh.ceremony, passkey.get(fresh.publicKey), attempt: mine.attempt)
            #expect(elsewhere.status == 400 && elsewhere.error == "invalid_request", "\(elsewhere.text)")
            #expect(try await bench.rows("authorization_codes") == 0)
            #expect(await !mine.browser.hasSession)
            #expect(await !other.browser.hasSession)
        }
    }

    @Test("A disabled user's passkey verifies but signs nobody in: 403 access_denied, no session, no use recorded")
    func aDisabledUsersPasskeySignsNobodyIn() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let client = try await bench.server.createCodeFlowClient()
            let passkey = try await bench.alicesPasskey()
            let disabled = try await bench.server.admin(
                "PATCH", "/admin/v1/tenants/default/users/\(bench.alice.user.userID)", json: ["status": "disabled"])
            #expect(disabled.status == 200)
            let signIn = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            let refused = try await signIn.signIn(with: passkey)
            #expect(refused.status == 403 && refused.error == "access_denied", "\(refused.text)")
            #expect(await !signIn.browser.hasSession)
            #expect(try await bench.rows("authorization_codes") == 0)
            #expect(try await bench.audit("passkey.used").isEmpty)
        }
    }

    @Test("A passkey of one tenant is unknown at another tenant's sign-in")
    func aPasskeyIsUnknownInAnotherTenant() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let passkey = try await bench.alicesPasskey()
            let created = try await bench.server.admin(
                "POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme Bank"])
            #expect(created.status == 201)
            let client = try await bench.server.createCodeFlowClient(tenant: "acme")
            let signIn = try await bench.openSignIn(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()), base: "/t/acme")
            let refused = try await signIn.signIn(with: passkey)
            #expect(refused.status == 400 && refused.error == "unknown_credential", "\(refused.text)")
            #expect(try await bench.audit("passkey.used").isEmpty)
            #expect(await !signIn.browser.hasSession)
        }
    }
}
