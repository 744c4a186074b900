import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// When a browser's live session may answer an authorization request without the person, and
/// when it may not: an enrollment and a native app are approved anew (RFC 8252 §8.6); an
/// `id_token_hint` of someone else is `login_required` (OpenID Connect Core §3.1.2.1);
/// `prompt=consent` and `select_account` ask again; a relying party's logout with the user's
/// ID token ends the session without a question.
@Suite("Sessions: what a live session answers without asking")
struct SessionReuseTests {
    /// alice signed in in `browser` to a web client, and the ID token that sign-in gave it.
    struct SignedIn {
        let server: TestServer
        let browser: PageVisitor
        let web: CodeFlowClient
        let alice: EnrolledUser
        let idToken: String
    }

    static func signedIn(_ body: @escaping @Sendable (SignedIn) async throws -> Void) async throws {
        try await TestServer.routed { server in
            let web = try await server.createCodeFlowClient(extra: ["post_logout_redirect_uris": ["https://rp.example.com/bye"]])
            let alice = try await server.enrolledUser("alice")
            let browser = PageVisitor(server)
            let idToken = try await idToken(server, browser, client: web, user: alice)
            try await body(SignedIn(server: server, browser: browser, web: web, alice: alice, idToken: idToken))
        }
    }

    /// Signs `user` in in `browser` for `client` on the phone and redeems the code.
    static func idToken(_ server: TestServer, _ browser: PageVisitor, client: CodeFlowClient, user: EnrolledUser) async throws
        -> String
    {
        let verifier = CodeFlowClient.verifier()
        let back = try await server.signIn(browser, client: client, user: user, challenge: CodeFlowClient.challenge(verifier))
        let code = try #require(back.redirectParameters["code"], "\(back.text.prefix(500))")
        let tokens = try await server.redeem(code, client: client, verifier: verifier)
        return try #require(tokens["id_token"] as? String, "\(tokens.errorDescription ?? "")")
    }

    static func authorize(_ bench: SignedIn, _ client: CodeFlowClient, scope: String = "openid",
                          _ extra: [(String, String)] = []) async throws -> TestServer.Answer {
        try await bench.browser.get("/authorize" + TestServer.authorizationQuery(
            client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()), scope: scope, extra: extra))
    }

    // MARK: - Approved anew (item: a public client enrolls a phone from a session)

    @Test("A request to enroll a device is approved on the phone anew, live session or not; prompt=none gets interaction_required")
    func enrollmentIsApprovedAnew() async throws {
        try await Self.signedIn { bench in
            let terminal = try await bench.server.createCodeFlowClient(
                redirectURI: "http://127.0.0.1/callback", scopes: ["openid", "countersign:enroll"], isPublic: true)
            let page = try await Self.authorize(bench, terminal, scope: "openid countersign:enroll")
            #expect(page.status == 200 && page.hidden("attempt") != nil, "the sign-in page, not a code: \(page.status)")
            #expect(page.redirectParameters["code"] == nil)
            let silent = try await Self.authorize(bench, terminal, scope: "openid countersign:enroll", [("prompt", "none")])
            #expect(silent.status == 303 && silent.redirectParameters["error"] == "interaction_required")

            let confidential = try await bench.server.createCodeFlowClient(scopes: ["openid", "countersign:enroll"])
            let web = try await Self.authorize(bench, confidential, scope: "openid countersign:enroll")
            #expect(web.status == 200 && web.hidden("attempt") != nil, "whatever the client")
        }
    }

    @Test("A native app (a public client with a loopback or private-use redirect) gets no code from a session without an approval",
          arguments: ["http://127.0.0.1/callback", "com.example.app:/callback"])
    func nativeAppsAreApprovedAnew(redirectURI: String) async throws {
        try await Self.signedIn { bench in
            let app = try await bench.server.createCodeFlowClient(redirectURI: redirectURI, isPublic: true)
            let page = try await Self.authorize(bench, app)
            #expect(page.status == 200 && page.hidden("attempt") != nil, "\(page.status) \(page.header("Location") ?? "")")
            let web = try await Self.authorize(bench, bench.web)
            #expect(web.redirectParameters["code"] != nil, "a confidential web client is answered by the session")
        }
    }

    // MARK: - id_token_hint and prompt

    @Test("prompt=none with the ID token of the session's user gets a code; with another user's it is login_required")
    func idTokenHintMustNameTheSessionsUser() async throws {
        try await Self.signedIn { bench in
            let same = try await Self.authorize(bench, bench.web, [("prompt", "none"), ("id_token_hint", bench.idToken)])
            #expect(same.redirectParameters["code"] != nil, "\(same.header("Location") ?? "")")

            let dave = try await bench.server.enrolledUser("dave")
            let davesToken = try await Self.idToken(bench.server, PageVisitor(bench.server), client: bench.web, user: dave)
            let other = try await Self.authorize(bench, bench.web, [("prompt", "none"), ("id_token_hint", davesToken)])
            #expect(other.status == 303 && other.redirectParameters["error"] == "login_required")
            #expect(other.redirectParameters["code"] == nil)

            let interactive = try await Self.authorize(bench, bench.web, [("id_token_hint", davesToken)])
            #expect(interactive.status == 200 && interactive.text.contains(#"value="dave""#),
                    "the sign-in starts with the hint's user: \(interactive.text.prefix(300))")
        }
    }

    @Test("An id_token_hint this issuer did not sign for the client is invalid_request", arguments: ["not-a-jwt", "forged"])
    func badIDTokenHintIsInvalidRequest(kind: String) async throws {
        try await Self.signedIn { bench in
            var hint = "not.a.jwt"
            if kind == "forged" {
                let parts = bench.idToken.split(separator: ".")
                hint = parts[0] + "." + parts[1] + "." + String(parts[2].reversed())
            }
            let answer = try await Self.authorize(bench, bench.web, [("prompt", "none"), ("id_token_hint", hint)])
            #expect(answer.status == 303 && answer.redirectParameters["error"] == "invalid_request")
        }
    }

    @Test("prompt=consent and prompt=select_account are not answered silently by a session: the sign-in asks again",
          arguments: ["consent", "select_account", "login consent"])
    func consentAndSelectAccountAskAgain(prompt: String) async throws {
        try await Self.signedIn { bench in
            let page = try await Self.authorize(bench, bench.web, [("prompt", prompt)])
            #expect(page.status == 200 && page.hidden("attempt") != nil)
            #expect(page.redirectParameters["code"] == nil)
        }
    }

    // MARK: - RP-Initiated Logout

    @Test("A relying party's logout with the ID token of the session's user ends it without asking and returns to the registered address")
    func logoutWithTheUsersIDTokenEndsTheSession() async throws {
        try await Self.signedIn { bench in
            let out = try await bench.browser.get("/logout?" + TestServer.formEncoded([
                ("id_token_hint", bench.idToken), ("post_logout_redirect_uri", "https://rp.example.com/bye"), ("state", "s1"),
            ]))
            #expect(out.status == 303 && out.header("Location") == "https://rp.example.com/bye?state=s1", "\(out.text.prefix(300))")
            let again = try await Self.authorize(bench, bench.web, [("prompt", "none")])
            #expect(again.redirectParameters["error"] == "login_required", "the session ended")
        }
    }

    @Test("A logout with another user's ID token asks first and ends nothing")
    func logoutWithAnotherUsersIDTokenAsks() async throws {
        try await Self.signedIn { bench in
            let dave = try await bench.server.enrolledUser("dave")
            let davesToken = try await Self.idToken(bench.server, PageVisitor(bench.server), client: bench.web, user: dave)
            let out = try await bench.browser.get("/logout?" + TestServer.formEncoded([("id_token_hint", davesToken)]))
            #expect(out.status == 200 && out.text.contains("Sign out?"))
            #expect(out.hidden("id_token_hint") == davesToken, "carried on to the confirmation")
            let again = try await Self.authorize(bench, bench.web, [("prompt", "none")])
            #expect(again.redirectParameters["code"] != nil, "the session stands")
        }
    }
}
