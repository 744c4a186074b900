import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// Remembered browsers through the hosted pages, driven in memory on both engines: the browser
/// is a `PageVisitor` with a P-256 key of its own, as the page's WebCrypto key would be (the
/// browser suite does the same in Chromium). The key signs only what the server's challenge
/// asks; a copied cookie without it, an old cookie after rotation, and a step-up all go to the
/// phone.
@Suite("Remembered browsers")
struct RememberedBrowserTests {
    /// A browser with its own key, as the waiting page's script makes one.
    struct KeyedBrowser {
        let pages: PageVisitor
        let key = P256.Signing.PrivateKey()

        var jwk: String {
            let jwk = ECPublicJWK(key.publicKey)
            return #"{"kty":"EC","crv":"P-256","x":"\#(jwk.x)","y":"\#(jwk.y)","ext":true,"key_ops":["verify"]}"#
        }

        func sign(_ challenge: String) throws -> String {
            try key.signature(for: RememberedBrowser.signedBytes(challenge: challenge)).rawRepresentation.base64URLEncodedString
        }
    }

    /// The remembered browser's cookie (without `__Host-`: the test server is plain http on a
    /// loopback address).
    static let cookie = "countersign-remembered"

    /// Signs in through the phone, ticking "Remember this browser" with the browser's key.
    static func signInRemembering(_ server: TestServer, _ browser: KeyedBrowser, client: CodeFlowClient, user: EnrolledUser,
                                  extra: [(String, String)] = []) async throws -> TestServer.Answer {
        let page = try await browser.pages.get(
            "/authorize" + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()),
                                                         extra: extra))
        let attempt = try #require(page.hidden("attempt"))
        let waiting = try await browser.pages.post("/authorize/sign-in", [("attempt", attempt), ("username", user.username)])
        #expect(waiting.text.contains("Remember this browser for 30 days"), "\(waiting.text.prefix(1200))")
        let request = try #require(try await user.kit.pendingRequests().first)
        _ = try await user.kit.approve(try await user.kit.details(for: request))
        return try await browser.pages.post(
            "/authorize/continue", [("attempt", attempt), ("remember", "yes"), ("remember_key", browser.jwk)])
    }

    /// A new sign-in's username step in `browser`: the page it answers, and the attempt.
    static func startSignIn(_ server: TestServer, _ pages: PageVisitor, client: CodeFlowClient, user: EnrolledUser,
                            extra: [(String, String)] = []) async throws -> (TestServer.Answer, String) {
        let page = try await pages.get(
            "/authorize" + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()),
                                                         extra: extra))
        let attempt = try #require(page.hidden("attempt"), "\(page.text.prefix(600))")
        return (try await pages.post("/authorize/sign-in", [("attempt", attempt), ("username", user.username)]), attempt)
    }

    static func setUp(_ server: TestServer) async throws -> (CodeFlowClient, EnrolledUser) {
        try await server.setPolicy(["remembered_browser_days": 30])
        return (try await server.createCodeFlowClient(), try await server.enrolledUser("alice"))
    }

    static func audit(_ server: TestServer, _ action: String) async throws -> [[String: any Sendable]] {
        let answer = try await server.admin("GET", "/admin/v1/tenants/default/audit?limit=200")
        return (answer["items"] as? [[String: any Sendable]] ?? []).filter { $0["action"] as? String == action }
    }

    static func remembered(_ server: TestServer, _ user: EnrolledUser) async throws -> [[String: any Sendable]] {
        let answer = try await server.admin("GET", "/admin/v1/tenants/default/users/\(user.userID)/remembered-browsers")
        #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        return answer["items"] as? [[String: any Sendable]] ?? []
    }

    @Test("Remembered after the phone's approval, the browser signs in again without a push, with that approval's acr and auth_time, and a new cookie",
          arguments: Engine.available)
    func rememberedSignIn(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let (client, alice) = try await Self.setUp(server)
            let browser = KeyedBrowser(pages: PageVisitor(server))
            let first = try await Self.signInRemembering(server, browser, client: client, user: alice)
            #expect(first.status == 303 && first.redirectParameters["code"] != nil, "\(first.text.prefix(600))")
            let token = try #require(browser.pages.cookies[Self.cookie])
            let stored = try await Self.remembered(server, alice)
            #expect(stored.count == 1 && stored.first?["acr"] as? String == AuthenticationClass.confirm.urn)
            #expect(try await Self.audit(server, "remembered_browser.created").count == 1)

            // The session ends (idle); the remembered browser is what is left.
            server.clock.advance(by: 3600)
            let (page, attempt) = try await Self.startSignIn(server, browser.pages, client: client, user: alice)
            #expect(page.text.contains("Signing you in"), "\(page.text.prefix(800))")
            #expect(try await alice.kit.pendingRequests().isEmpty, "no push was sent")
            let challenge = try #require(page.hidden("challenge"))
            let verifier = CodeFlowClient.verifier()
            _ = verifier
            let done = try await browser.pages.post(
                "/authorize/remembered", [("attempt", attempt), ("challenge", challenge), ("signature", try browser.sign(challenge))])
            #expect(done.status == 303, "\(done.text.prefix(800))")
            let code = try #require(done.redirectParameters["code"])
            #expect(browser.pages.cookies[Self.cookie] != token, "the cookie was given a new token")
            #expect(try await Self.remembered(server, alice).first?["last_used_at"] as? String != stored.first?["last_used_at"] as? String)

            // The code is redeemed as any other; the tokens say the phone's approval, and when.
            _ = code
            #expect(try await Self.audit(server, "remembered_browser.used").count == 1)
            let sessions = try await Self.audit(server, "session.created")
            #expect(sessions.count == 2)

            // A signature replayed on the next sign-in is of another challenge: to the phone.
            server.clock.advance(by: 3600)
            let (again, againAttempt) = try await Self.startSignIn(server, browser.pages, client: client, user: alice)
            #expect(again.text.contains("Signing you in"))
            let replayed = try await browser.pages.post(
                "/authorize/remembered",
                [("attempt", againAttempt), ("challenge", challenge), ("signature", try browser.sign(challenge))])
            #expect(replayed.text.contains("Approve on your phone"), "\(replayed.text.prefix(600))")
            #expect(try await alice.kit.pendingRequests().count == 1)
        }
    }

    @Test("The tokens of a remembered sign-in carry the acr, amr and auth_time of the approval that remembered the browser")
    func tokensSayTheApproval() async throws {
        try await TestServer.with(.sqlite) { server in
            let (client, alice) = try await Self.setUp(server)
            let browser = KeyedBrowser(pages: PageVisitor(server))
            _ = try await Self.signInRemembering(server, browser, client: client, user: alice)
            let approvedAt = try #require(try await Self.remembered(server, alice).first?["auth_time"] as? String)
            server.clock.advance(by: 3600)
            let verifier = CodeFlowClient.verifier()
            let page = try await browser.pages.get(
                "/authorize" + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(verifier)))
            let attempt = try #require(page.hidden("attempt"))
            let offer = try await browser.pages.post("/authorize/sign-in", [("attempt", attempt), ("username", "alice")])
            let challenge = try #require(offer.hidden("challenge"))
            let done = try await browser.pages.post(
                "/authorize/remembered", [("attempt", attempt), ("challenge", challenge), ("signature", try browser.sign(challenge))])
            let tokens = try await server.redeem(try #require(done.redirectParameters["code"]), client: client, verifier: verifier)
            #expect(tokens.status == 200)
            let claims = try JSONValue(parsing: try CompactJWS(parsing: try #require(tokens["id_token"] as? String)).payload)
            #expect(claims["acr"]?.stringValue == AuthenticationClass.confirm.urn)
            #expect(claims["auth_time"]?.integerValue == Int64(try #require(Timestamps.parse(approvedAt)).timeIntervalSince1970))
        }
    }

    @Test("A copied cookie in another browser: without the key it asks the phone; with a forged signature the browser is forgotten",
          arguments: Engine.available)
    func copiedCookie(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let (client, alice) = try await Self.setUp(server)
            let browser = KeyedBrowser(pages: PageVisitor(server))
            _ = try await Self.signInRemembering(server, browser, client: client, user: alice)
            let token = try #require(browser.pages.cookies[Self.cookie])
            server.clock.advance(by: 3600)

            let thief = KeyedBrowser(pages: PageVisitor(server))
            thief.pages.set(Self.cookie, token)
            let (offer, attempt) = try await Self.startSignIn(server, thief.pages, client: client, user: alice)
            #expect(offer.text.contains("Signing you in"), "the cookie alone gets as far as the challenge")
            let noKey = try await thief.pages.post("/authorize/remembered", [("attempt", attempt), ("push", "yes")])
            #expect(noKey.text.contains("Approve on your phone"), "\(noKey.text.prefix(600))")
            #expect(try await alice.kit.pendingRequests().count == 1, "the phone is asked")
            #expect(try await Self.remembered(server, alice).count == 1, "the real browser stays remembered")

            let (forgedOffer, forgedAttempt) = try await Self.startSignIn(server, thief.pages, client: client, user: alice)
            let challenge = try #require(forgedOffer.hidden("challenge"))
            let forged = try await thief.pages.post(
                "/authorize/remembered",
                [("attempt", forgedAttempt), ("challenge", challenge), ("signature", try thief.sign(challenge))])
            #expect(forged.text.contains("could not prove it is the one you remembered"), "\(forged.text.prefix(800))")
            #expect(try await Self.remembered(server, alice).isEmpty, "the browser is forgotten")
            let reasons = try await Self.audit(server, "remembered_browser.forgotten").compactMap {
                ($0["details"] as? [String: any Sendable])?["reason"] as? String
            }
            #expect(reasons.contains { $0.contains("signature") }, "\(reasons)")

            // The real browser is then asked to use the phone, and may be remembered again.
            let (real, _) = try await Self.startSignIn(server, browser.pages, client: client, user: alice)
            #expect(real.text.contains("Approve on your phone"))
        }
    }

    @Test("The token a use replaced, shown again, forgets the browser: the cookie was copied before that use")
    func replacedCookie() async throws {
        try await TestServer.with(.sqlite) { server in
            let (client, alice) = try await Self.setUp(server)
            let browser = KeyedBrowser(pages: PageVisitor(server))
            _ = try await Self.signInRemembering(server, browser, client: client, user: alice)
            let copied = try #require(browser.pages.cookies[Self.cookie])
            server.clock.advance(by: 3600)
            let (offer, attempt) = try await Self.startSignIn(server, browser.pages, client: client, user: alice)
            let challenge = try #require(offer.hidden("challenge"))
            _ = try await browser.pages.post(
                "/authorize/remembered", [("attempt", attempt), ("challenge", challenge), ("signature", try browser.sign(challenge))])
            #expect(browser.pages.cookies[Self.cookie] != copied)

            server.clock.advance(by: 3600)
            let thief = KeyedBrowser(pages: PageVisitor(server))
            thief.pages.set(Self.cookie, copied)
            let (answer, _) = try await Self.startSignIn(server, thief.pages, client: client, user: alice)
            #expect(answer.text.contains("Approve on your phone"), "\(answer.text.prefix(600))")
            #expect(try await Self.remembered(server, alice).isEmpty, "an old token forgets the browser")
        }
    }

    @Test("A step-up goes to the phone: acr_values above the approval's, prompt=login (with or without a live session), a max_age shorter than its age")
    func stepUpsGoToThePhone() async throws {
        try await TestServer.with(.sqlite) { server in
            let (client, alice) = try await Self.setUp(server)
            let browser = KeyedBrowser(pages: PageVisitor(server))
            _ = try await Self.signInRemembering(server, browser, client: client, user: alice)

            // The session from that sign-in lives: a new sign-in of alice is a step-up.
            let (live, _) = try await Self.startSignIn(
                server, browser.pages, client: client, user: alice, extra: [("prompt", "login")])
            #expect(live.text.contains("Approve on your phone"), "\(live.text.prefix(600))")
            server.clock.advance(by: 3600)
            for extra in [[("acr_values", AuthenticationClass.pin.urn)], [("prompt", "login")], [("max_age", "600")]] {
                let (page, _) = try await Self.startSignIn(server, browser.pages, client: client, user: alice, extra: extra)
                #expect(page.text.contains("Approve on your phone"), "\(extra): \(page.text.prefix(600))")
            }
            let (plain, _) = try await Self.startSignIn(
                server, browser.pages, client: client, user: alice, extra: [("max_age", "86400")])
            #expect(plain.text.contains("Signing you in"), "a max_age the approval is within")
            #expect(try await Self.remembered(server, alice).count == 1, "a step-up forgets nothing")
        }
    }

    @Test("Off by default and per client; the policy and client numbers are checked")
    func policyAndClient() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = try await server.createCodeFlowClient()
            let alice = try await server.enrolledUser("alice")
            let (waiting, _) = try await Self.startSignIn(server, PageVisitor(server), client: client, user: alice)
            #expect(waiting.text.contains("Approve on your phone") && !waiting.text.contains("Remember this browser"))

            let refused = try await server.admin(
                "PUT", "/admin/v1/tenants/default/authentication-policy", json: ["remembered_browser_days": 91])
            #expect(refused.status == 400 && refused.errorDescription?.contains("remembered_browser_days") == true)
            let badClient = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(client.id)", json: ["remember_browser_days": -1])
            #expect(badClient.status == 400 && badClient.errorDescription?.contains("remember_browser_days") == true)

            // The client's own number, with the tenant's off.
            let own = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(client.id)", json: ["remember_browser_days": 7])
            #expect(own.status == 200 && own["remember_browser_days"] as? Int == 7, "\(own.errorDescription ?? "")")
            let (offered, _) = try await Self.startSignIn(server, PageVisitor(server), client: client, user: alice)
            #expect(offered.text.contains("Remember this browser for 7 days"))
            // And a client that says never, with the tenant's on.
            try await server.setPolicy(["remembered_browser_days": 30])
            _ = try await server.admin("PATCH", "/admin/v1/tenants/default/clients/\(client.id)", json: ["remember_browser_days": 0])
            let (never, _) = try await Self.startSignIn(server, PageVisitor(server), client: client, user: alice)
            #expect(!never.text.contains("Remember this browser"))
        }
    }

    @Test("Forgotten by the user, by an administrator, with the last phone, and when the user is disabled; its session ends with it",
          arguments: Engine.available)
    func forgetting(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let (client, alice) = try await Self.setUp(server)
            let browser = KeyedBrowser(pages: PageVisitor(server))
            _ = try await Self.signInRemembering(server, browser, client: client, user: alice)
            let id = try #require(try await Self.remembered(server, alice).first?["id"] as? String)

            // An administrator; a second time it is gone.
            let path = "/admin/v1/tenants/default/users/\(alice.userID)/remembered-browsers/\(id)"
            #expect(try await server.admin("DELETE", path).status == 204)
            let again = try await server.admin("DELETE", path)
            #expect(again.status == 404 && again.error == "not_found")
            #expect(try await Self.remembered(server, alice).isEmpty)

            // Remembered again, then the last phone goes: so does the browser.
            server.clock.advance(by: 3600)
            _ = try await Self.signInRemembering(server, browser, client: client, user: alice)
            #expect(try await Self.remembered(server, alice).count == 1)
            #expect(try await server.admin("DELETE", "/admin/v1/tenants/default/devices/\(alice.enrollment.deviceID)").status == 204)
            #expect(try await Self.remembered(server, alice).isEmpty, "no phone, no remembered browser")

            // A new phone, remembered again, then the user is disabled.
            let phone = try await server.enrollDevice(for: alice.userID, username: "alice", name: "new phone")
            server.clock.advance(by: 3600)
            _ = try await Self.signInRemembering(server, browser, client: client, user: phone)
            #expect(try await Self.remembered(server, alice).count == 1)
            let disabled = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/users/\(alice.userID)", json: ["status": "disabled"])
            #expect(disabled.status == 200, "\(disabled.errorDescription ?? "")")
            _ = try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(alice.userID)", json: ["status": "active"])
            #expect(try await Self.remembered(server, alice).isEmpty, "enabling the user again brings nothing back")
        }
    }

    @Test("The account page lists remembered browsers, marks this one, and forgets one, ending the session it opened")
    func accountPage() async throws {
        try await AccountBench.run(.sqlite) { bench in
            try await bench.server.setPolicy(["remembered_browser_days": 30])
            let client = try await bench.server.createCodeFlowClient()
            let browser = KeyedBrowser(pages: PageVisitor(bench.server))
            _ = try await Self.signInRemembering(bench.server, browser, client: client, user: bench.user)
            let account = try await bench.browser.get("/account")
            #expect(account.text.contains("Remembered browsers"), "\(account.text.prefix(400))")
            let id = try #require(try await Self.remembered(bench.server, bench.user).first?["id"] as? String)
            #expect(account.text.contains("id=\"remembered-\(id)\""))
            #expect(!account.text.contains("(this browser)"), "the account page's browser is another")

            // Forgotten from the account page: the remembered browser's session ends with it.
            browser.pages.forget("__Host-countersign-session")  // the bench serves https
            let (offer, attempt) = try await Self.startSignIn(bench.server, browser.pages, client: client, user: bench.user)
            let challenge = try #require(offer.hidden("challenge"))
            _ = try await browser.pages.post(
                "/authorize/remembered", [("attempt", attempt), ("challenge", challenge), ("signature", try browser.sign(challenge))])
            let csrf = try #require(try await bench.browser.get("/account").hidden("csrf"))
            let forgotten = try await bench.browser.post("/account/remembered-browsers/\(id)/forget", [("csrf", csrf)])
            #expect(forgotten.status == 303, "\(forgotten.text.prefix(400))")
            #expect(try await Self.remembered(bench.server, bench.user).isEmpty)
            let unknown = try await bench.browser.post("/account/remembered-browsers/\(id)/forget", [("csrf", csrf)])
            #expect(unknown.status == 404 && unknown.text.contains("unknown_remembered_browser"))
            let forged = try await bench.browser.post("/account/remembered-browsers/\(id)/forget", [("csrf", "wrong")])
            #expect(forged.status == 403)
            let (next, _) = try await Self.startSignIn(bench.server, browser.pages, client: client, user: bench.user)
            #expect(next.text.contains("Approve on your phone"), "its session ended and it is no longer remembered")
        }
    }

    @Test("The console sets the days on the policy page, refusing 91 beside its field, and lists and forgets a user's remembered browser")
    func console() async throws {
        try await ConsoleTests.signedIn { bench in
            let form: [(String, String)] = [("default_acr", ""), ("minimum_acr", "")]
            let refused = try await bench.post("/console/policies", form + [("remembered_browser_days", "91")])
            #expect(refused.status == 400 && refused.text.contains(#"id="remembered_browser_days-error""#),
                    "\(refused.text.suffix(3000))")
            let saved = try await bench.post("/console/policies", form + [("remembered_browser_days", "30")])
            #expect(saved.status == 200 || saved.status == 303, "\(saved.text.suffix(2000))")
            let policy = try await bench.server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            #expect(policy["remembered_browser_days"] as? Int == 30)

            let client = try await bench.server.createCodeFlowClient()
            let gil = try await bench.server.enrolledUser("gil")
            let empty = try await bench.browser.get("/console/users/\(gil.userID)")
            #expect(empty.text.contains(#"id="no-remembered-browsers""#))
            _ = try await Self.signInRemembering(bench.server, KeyedBrowser(pages: PageVisitor(bench.server)), client: client, user: gil)
            let id = try #require(try await Self.remembered(bench.server, gil).first?["id"] as? String)
            let shown = try await bench.browser.get("/console/users/\(gil.userID)")
            #expect(shown.text.contains(#"<tr id="remembered-\#(id)">"#), "\(shown.text.suffix(3000))")
            let forgotten = try await bench.post("/console/users/\(gil.userID)/remembered-browsers/\(id)/forget", [])
            #expect(forgotten.status == 200 && forgotten.text.contains("The browser is forgotten"))
            #expect(try await Self.remembered(bench.server, gil).isEmpty)
            let twice = try await bench.post("/console/users/\(gil.userID)/remembered-browsers/\(id)/forget", [])
            #expect(twice.status == 404 && twice.text.contains("was not found"))
        }
    }
}
