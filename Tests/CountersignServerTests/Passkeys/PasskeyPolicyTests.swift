import CountersignCore
import CountersignWebAuthn
import Foundation
import Testing
@testable import CountersignServer

/// What a tenant's policy and a relying party's request decide about passkeys: the passkey
/// class in `acr_values`, cloned credentials, passkeys switched off, and the `passkeys` member
/// of the authentication policy.
@Suite("Passkeys: the passkey class, counters, and the tenant's passkey policy")
struct PasskeyPolicyTests {
    static let passkeyClass = [("acr_values", "urn:countersign:acr:passkey")]

    // MARK: - acr_values=urn:countersign:acr:passkey

    @Test("A request for the passkey class offers no phone, refuses the phone form, and requires user verification")
    func thePasskeyClassRequiresAVerifiedPasskey() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let client = try await bench.server.createCodeFlowClient()
            let passkey = try await bench.alicesPasskey()
            let verifier = CodeFlowClient.verifier()
            let signIn = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(verifier), extra: Self.passkeyClass)
            #expect(!signIn.page.text.contains(#"action="/authorize/sign-in""#), "no username form for the phone")
            #expect(!signIn.page.text.contains(#"name="username""#))
            #expect(signIn.page.text.contains(#"id="passkey-sign-in""#))
            #expect(signIn.page.text.contains("This application asks for a passkey"))

            let phone = try await signIn.browser.post("/authorize/sign-in", [("attempt", signIn.attempt), ("username", "alice")])
            #expect(phone.status == 400)
            let refusal = "This application asks you to sign in with a passkey."
            #expect(phone.text.contains(#"<p class="field-error" id="passkey-error" role="alert">\#(refusal)</p>"#),
                    "\(phone.text.prefix(1500))")
            #expect(try await bench.alice.user.kit.pendingRequests().isEmpty, "no request went to the phone")

            let asked = try await signIn.requestOptions().decoded(RequestOptionsAnswer.self)
            #expect(asked.publicKey.userVerification == "required")
            let unverified = try await signIn.finish(
                ceremony: asked.ceremony, passkey.get(asked.publicKey) { $0.flags.remove(.userVerified) })
            #expect(unverified.status == 400 && unverified.error == "user_not_verified", "\(unverified.text)")
            #expect(try await bench.rows("authorization_codes") == 0)

            let done = try await signIn.signIn(with: passkey)
            #expect(done.status == 200, "\(done.text)")
            let token = try await bench.idToken(of: done["redirect"] as? String, client: client, verifier: verifier)
            #expect(token.acr == "urn:countersign:acr:passkey")
        }
    }

    @Test("A session of a phone approval does not answer prompt=none for the passkey class (login_required); a passkey session does")
    func onlyAPasskeySessionAnswersThePasskeyClass() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let client = try await bench.server.createCodeFlowClient()
            let passkey = try await bench.alicesPasskey()
            let byPhone = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            let browser = byPhone.browser
            _ = try await browser.post("/authorize/sign-in", [("attempt", byPhone.attempt), ("username", "alice")])
            let alice = bench.alice.user
            let request = try #require(try await alice.kit.pendingRequests().first)
            _ = try await alice.kit.approve(try await alice.kit.details(for: request))
            let approved = try await browser.post("/authorize/continue", [("attempt", byPhone.attempt)])
            #expect(approved.status == 303 && approved.redirectParameters["code"] != nil)

            let silently = "/authorize" + TestServer.authorizationQuery(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()),
                extra: [("prompt", "none")] + Self.passkeyClass)
            let refused = try await browser.get(silently)
            #expect(refused.status == 303)
            #expect(refused.redirectParameters["error"] == "login_required")

            let withPasskey = try await bench.openSignIn(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()), extra: Self.passkeyClass, browser: browser)
            let done = try await withPasskey.signIn(with: passkey)
            #expect(done.status == 200, "\(done.text)")
            let answered = try await browser.get(silently)
            #expect(answered.status == 303)
            #expect(answered.redirectParameters["code"] != nil, "\(answered.header("Location") ?? "")")
        }
    }

    // MARK: - passkey in a policy's alternatives

    static let pinClass = "urn:countersign:acr:pin"
    static let biometricClass = "urn:countersign:acr:biometric"

    @Test("A class the policy lets only a passkey reach offers no phone at the sign-in; one with both offers both")
    func aClassOnlyAPasskeyReaches() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let passkey = try await bench.alicesPasskey()
            try await bench.server.setPolicy(["authenticators": [Self.pinClass: [["passkey"]],
                                                                 Self.biometricClass: [["biometric"], ["passkey"]]]])
            let client = try await bench.server.createCodeFlowClient()
            let verifier = CodeFlowClient.verifier()
            let signIn = try await bench.openSignIn(
                client, challenge: CodeFlowClient.challenge(verifier), extra: [("acr_values", Self.pinClass)])
            #expect(!signIn.page.text.contains(#"name="username""#), "no username form for the phone")
            #expect(signIn.page.text.contains(#"id="passkey-sign-in""#))
            let phone = try await signIn.browser.post("/authorize/sign-in", [("attempt", signIn.attempt), ("username", "alice")])
            #expect(phone.status == 400 && phone.text.contains("This application asks you to sign in with a passkey."))
            #expect(try await bench.alice.user.kit.pendingRequests().isEmpty, "no request went to the phone")

            let asked = try await signIn.requestOptions().decoded(RequestOptionsAnswer.self)
            #expect(asked.publicKey.userVerification == "required", "a PIN class needs the user verified")
            let unverified = try await signIn.finish(
                ceremony: asked.ceremony, passkey.get(asked.publicKey) { $0.flags.remove(.userVerified) })
            #expect(unverified.status == 400 && unverified.error == "user_not_verified", "\(unverified.text)")
            let done = try await signIn.signIn(with: passkey)
            #expect(done.status == 200, "\(done.text)")
            let token = try await bench.idToken(of: done["redirect"] as? String, client: client, verifier: verifier)
            #expect(token.acr == PasskeyClass.urn)

            let both = try await bench.openSignIn(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()),
                extra: [("acr_values", Self.biometricClass)])
            #expect(both.page.text.contains(#"name="username""#) && both.page.text.contains(#"id="passkey-sign-in""#))
        }
    }

    @Test("A class the policy names without a passkey: no passkey button, options refused 403 access_denied, and a passkey session does not answer it")
    func aClassThePolicyKeepsFromPasskeys() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let passkey = try await bench.alicesPasskey()
            let client = try await bench.server.createCodeFlowClient()
            let browser = bench.browser()
            let withPasskey = try await bench.openSignIn(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()), browser: browser)
            #expect(try await withPasskey.signIn(with: passkey).status == 200)

            try await bench.server.setPolicy(["authenticators": [Self.pinClass: [["pin"], ["number-match", "custom"]]]])
            let signIn = try await bench.openSignIn(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()), extra: [("acr_values", Self.pinClass)],
                browser: bench.browser())
            #expect(signIn.page.text.contains(#"name="username""#))
            #expect(!signIn.page.text.contains(#"id="passkey-sign-in""#) && !signIn.page.text.contains("webauthn"))
            let options = try await signIn.requestOptions()
            #expect(options.status == 403 && options.error == "access_denied", "\(options.text)")
            #expect(options.errorDescription?.contains("a passkey is not accepted here") == true)

            let silently = try await browser.get("/authorize" + TestServer.authorizationQuery(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()),
                extra: [("prompt", "none"), ("acr_values", Self.pinClass)]))
            #expect(silently.status == 303 && silently.redirectParameters["error"] == "login_required",
                    "the passkey session does not answer the PIN class")
            let stronger = try await browser.get("/authorize" + TestServer.authorizationQuery(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()),
                extra: [("prompt", "none"), ("acr_values", Self.biometricClass)]))
            #expect(stronger.status == 303 && stronger.redirectParameters["code"] != nil,
                    "a class the policy does not name still takes the passkey")
        }
    }

    // MARK: - Signature counters

    @Test("A counter that goes backwards is refused by default and flags the passkey, which the account page shows",
          arguments: Engine.available)
    func counterRegressionIsRefusedAndFlagged(engine: Engine) async throws {
        try await PasskeyBench.run(engine) { bench in
            let client = try await bench.server.createCodeFlowClient()
            var passkey = try await bench.alicesPasskey(signCount: 5)
            passkey.signCount = 3
            let signIn = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            let refused = try await signIn.signIn(with: passkey)
            #expect(refused.status == 400 && refused.error == "sign_count_regression", "\(refused.text)")
            #expect(await !signIn.browser.hasSession)
            #expect(try await bench.rows("authorization_codes") == 0)

            let record = try #require(try await bench.passkeys(of: bench.alice.user.userID).first)
            #expect(record["clone_warning_at"] as? String != nil)
            #expect(record["sign_count"] as? Int == 5)
            #expect(record["last_used_at"] == nil)
            let warned = try await bench.audit("passkey.clone_warning")
            #expect(warned.count == 1 && warned.first?["target_id"] as? String == record["id"] as? String)
            #expect(try await bench.audit("passkey.used").isEmpty)
            let page = try await bench.alice.page()
            #expect(page.text.contains(#"<dd class="warning">Its signature counter went backwards on"#))
            #expect(page.text.contains("A passkey&#39;s signature counter went backwards: it may have been copied"),
                    "the recent activity says so")
        }
    }

    @Test("With sign_count_regression flag the sign-in passes, and the passkey is flagged", arguments: Engine.available)
    func counterRegressionMayBeFlaggedOnly(engine: Engine) async throws {
        try await PasskeyBench.run(engine) { bench in
            try await bench.setPasskeyPolicy(["sign_count_regression": "flag"])
            let client = try await bench.server.createCodeFlowClient()
            var passkey = try await bench.alicesPasskey(signCount: 5)
            passkey.signCount = 3
            let signIn = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            let done = try await signIn.signIn(with: passkey)
            #expect(done.status == 200, "\(done.text)")
            #expect(PasskeyBench.parameters(of: done["redirect"] as? String)["code"] != nil)

            let record = try #require(try await bench.passkeys(of: bench.alice.user.userID).first)
            #expect(record["clone_warning_at"] as? String != nil)
            #expect(record["sign_count"] as? Int == 5, "the counter never goes back")
            let used = try #require(try await bench.audit("passkey.used").first)
            #expect((used["details"] as? [String: any Sendable])?["clone_warning"] as? String == "true")
            let warned = try await bench.audit("passkey.clone_warning")
            #expect(warned.count == 1 && warned.first?["actor"] as? String == "system")
            let page = try await bench.alice.page()
            #expect(page.text.contains(#"<dd class="warning">"#))
            #expect(page.text.contains("A passkey&#39;s signature counter went backwards: it may have been copied"))
        }
    }

    // MARK: - Passkeys switched off

    @Test("With passkeys disabled the options answer 403 passkeys_disabled, and neither page offers a passkey")
    func passkeysSwitchedOff() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let passkey = try await bench.alicesPasskey()
            try await bench.setPasskeyPolicy(["enabled": false])
            let client = try await bench.server.createCodeFlowClient()
            let signIn = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            #expect(!signIn.page.text.contains(#"id="passkey""#) && !signIn.page.text.contains("passkey.js"))
            #expect(signIn.page.text.contains(#"action="/authorize/sign-in""#), "the phone still signs in")

            let options = try await signIn.requestOptions()
            #expect(options.status == 403 && options.error == "passkeys_disabled", "\(options.text)")
            let account = try await bench.alice.page()
            #expect(!account.text.contains("passkeys-heading") && !account.text.contains("passkey.js"))
            let adding = try await bench.alice.creationOptions()
            #expect(adding.status == 403 && adding.error == "passkeys_disabled", "\(adding.text)")

            let asking = try await bench.browser().get("/authorize" + TestServer.authorizationQuery(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()), extra: Self.passkeyClass))
            #expect(asking.text.contains("This application asks for a passkey, and passkeys are not enabled here."))
            #expect(!asking.text.contains(#"name="username""#) && !asking.text.contains("data-attempt"))
            #expect(try await bench.passkeys(of: bench.alice.user.userID).first?["credential_id"] as? String == passkey.credentialID,
                    "switching passkeys off keeps the passkeys registered")
        }
    }

    // MARK: - The policy's passkeys member

    @Test("A passkeys policy that cannot work is refused with 400 naming the field, and changes nothing",
          arguments: [
            (["rp_id": "https://countersign.test"], "passkeys.rp_id"),
            (["rp_id": "countersign.test:8443"], "passkeys.rp_id"),
            (["rp_id": "countersign.test", "origins": ["https://login.bank.example"]], "passkeys.origins"),
            (["origins": ["http://login.countersign.test"]], "passkeys.origins"),
            // Without an RP ID of its own the tenant's is the server's host, countersign.test.
            (["origins": ["https://login.bank.example"]], "passkeys.origins"),
            (["top_origins": ["https://portal.example/path"]], "passkeys.top_origins"),
            (["rp_name": ""], "passkeys.rp_name"),
            (["attestation": "none", "allow_unattested": false], "passkeys.allow_unattested"),
            (["attestation": "direct", "allow_unattested": false], "passkeys.attestation_roots"),
            (["attestation": "direct", "attestation_roots": ["MIIBkTCB+wIJAKHBfpegPjMCMA0GCSqGSIb3DQEBCwUAMBExDzANBgNV"]],
             "passkeys.attestation_roots"),
            (["user_verification": "sometimes"], "passkeys.user_verification"),
          ] as [([String: any Sendable], String)])
    func invalidPasskeyPolicy(passkeys: [String: any Sendable], field: String) async throws {
        try await TestServer.routed { server in
            let answer = try await server.admin(
                "PUT", "/admin/v1/tenants/default/authentication-policy", json: ["passkeys": passkeys])
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.errorDescription?.hasPrefix("field \(field) is invalid") == true, "\(answer.errorDescription ?? "")")
            let policy = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            let stored = try #require(policy["passkeys"] as? [String: any Sendable])
            #expect(stored["rp_id"] == nil && stored["origins"] as? [String] == [] && stored["attestation"] as? String == "none")
        }
    }

    @Test("The passkeys member's defaults, as the policy shows them, and a policy that sets every member")
    func passkeyPolicyDefaultsAndEveryMember() async throws {
        try await TestServer.routed { server in
            let shown = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            let defaults = try #require(shown["passkeys"] as? [String: any Sendable])
            #expect(defaults["enabled"] as? Bool == true)
            #expect(defaults["user_verification"] as? String == "preferred")
            #expect(defaults["attestation"] as? String == "none")
            #expect(defaults["allow_unattested"] as? Bool == true)
            #expect(defaults["sign_count_regression"] as? String == "reject")
            #expect(defaults["origins"] as? [String] == [] && defaults["top_origins"] as? [String] == [])
            #expect(defaults["attestation_roots"] as? [String] == [])
            #expect(defaults["rp_id"] == nil && defaults["rp_name"] == nil)

            let every: [String: any Sendable] = [
                "enabled": true, "rp_id": "countersign.test", "rp_name": "Countersign Bank",
                "origins": ["https://login.countersign.test", "android:apk-key-hash:" + String(repeating: "A", count: 43)],
                "top_origins": ["https://portal.example"], "user_verification": "required", "attestation": "direct",
                "allow_unattested": true, "sign_count_regression": "flag", "attestation_roots": [String](),
            ]
            let set = try await server.admin("PUT", "/admin/v1/tenants/default/authentication-policy", json: ["passkeys": every])
            #expect(set.status == 200, "\(set.errorDescription ?? "")")
            let stored = try #require(set["passkeys"] as? [String: any Sendable])
            #expect(stored["rp_name"] as? String == "Countersign Bank")
            #expect(stored["user_verification"] as? String == "required" && stored["sign_count_regression"] as? String == "flag")
            #expect((stored["origins"] as? [String])?.count == 2)
        }
    }
}
