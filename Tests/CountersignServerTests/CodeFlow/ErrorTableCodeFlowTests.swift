import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// Every error of the authorization endpoint (RFC 6749 §4.1.2.1, OpenID Connect Core §3.1.2.6,
/// RFC 9126) and of the code grant (RFC 6749 §5.2, RFC 7636 §4.6), each row one request.
@Suite("Code flow error tables")
struct ErrorTableCodeFlowTests {
    /// Errors shown on a page: the client or its redirect URI is not known to be valid, so
    /// nothing is sent anywhere.
    @Test("Requests whose client or redirect URI is not valid are never redirected", arguments: [
        ("no client_id", [("client_id", nil)], "invalid_request"),
        ("unknown client", [("client_id", "cli_unknown")], "unauthorized_client"),
        ("no redirect_uri", [("redirect_uri", nil)], "invalid_request"),
        ("unregistered redirect_uri", [("redirect_uri", "https://evil.example.com/callback")], "invalid_request"),
        ("redirect_uri differing in its path", [("redirect_uri", "https://rp.example.com/callback/")], "invalid_request"),
        ("unknown request_uri", [("request_uri", "urn:ietf:params:oauth:request_uri:nope")], "invalid_request_uri"),
        ("request_uri of another form", [("request_uri", "https://rp.example.com/request.jwt")], "invalid_request_uri"),
    ] as [(String, [(String, String?)], String)])
    func pageErrors(_ name: String, _ changes: [(String, String?)], _ code: String) async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let answer = try await PageVisitor(server).get("/authorize" + Self.query(client, changes))
            #expect(answer.status == 400, "\(name)")
            #expect(answer.header("Location") == nil, "\(name): never redirected")
            #expect(answer.text.contains("<code>\(code)</code>"), "\(name): \(answer.text.prefix(600))")
        }
    }

    /// Errors sent back to the client with `state` and `iss`.
    @Test("Requests with a valid client and redirect URI get their error at the redirect URI", arguments: [
        ("no response_type", [("response_type", nil)], "invalid_request"),
        ("response_type token", [("response_type", "token")], "unsupported_response_type"),
        ("response_type id_token", [("response_type", "code id_token")], "unsupported_response_type"),
        ("response_mode fragment", [("response_mode", "fragment")], "invalid_request"),
        ("no scope", [("scope", nil)], "invalid_request"),
        ("scope without openid", [("scope", "profile")], "invalid_scope"),
        ("scope the client may not use", [("scope", "openid payments")], "invalid_scope"),
        ("no code_challenge", [("code_challenge", nil)], "invalid_request"),
        ("no code_challenge_method", [("code_challenge_method", nil)], "invalid_request"),
        ("plain PKCE", [("code_challenge_method", "plain")], "invalid_request"),
        ("short code_challenge", [("code_challenge", "abc")], "invalid_request"),
        ("prompt none with login", [("prompt", "none login")], "invalid_request"),
        ("unknown prompt", [("prompt", "sometimes")], "invalid_request"),
        ("negative max_age", [("max_age", "-1")], "invalid_request"),
        ("max_age not a number", [("max_age", "soon")], "invalid_request"),
        ("request object", [("request", "eyJhbGciOiJub25lIn0.e30.")], "request_not_supported"),
        ("registration", [("registration", "{}")], "registration_not_supported"),
        ("prompt none without a session", [("prompt", "none")], "login_required"),
    ] as [(String, [(String, String?)], String)])
    func redirectedErrors(_ name: String, _ changes: [(String, String?)], _ code: String) async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let answer = try await PageVisitor(server).get("/authorize" + Self.query(client, changes))
            #expect(answer.status == 303, "\(name): \(answer.text.prefix(400))")
            #expect(answer.header("Location")?.hasPrefix(client.redirectURI + "?") == true, "\(name)")
            let parameters = answer.redirectParameters
            #expect(parameters["error"] == code, "\(name): \(parameters)")
            #expect(parameters["error_description"]?.isEmpty == false)
            #expect(parameters["state"] == "af0ifjsldkj+&=", "\(name): state comes back exactly")
            #expect(parameters["iss"] == server.base)
            #expect(parameters["code"] == nil)
        }
    }

    @Test("A parameter sent twice is malformed, and shown, not redirected (RFC 6749 §3.1)")
    func repeatedParameter() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let answer = try await PageVisitor(server).get("/authorize" + Self.query(client, []) + "&state=again")
            #expect(answer.status == 400)
            #expect(answer.header("Location") == nil)
        }
    }

    /// The request of the table: valid, with `changes` applied (nil removes a parameter).
    static func query(_ client: CodeFlowClient, _ changes: [(String, String?)]) -> String {
        var parameters: [(String, String)] = [
            ("response_type", "code"), ("client_id", client.id), ("redirect_uri", client.redirectURI), ("scope", "openid"),
            ("state", "af0ifjsldkj+&="), ("code_challenge", CodeFlowClient.challenge(CodeFlowClient.verifier())),
            ("code_challenge_method", "S256"),
        ]
        for (name, value) in changes {
            parameters.removeAll { $0.0 == name }
            if let value { parameters.append((name, value)) }
        }
        return "?" + TestServer.formEncoded(parameters)
    }

    // MARK: - The code grant

    @Test("Code grant errors: each the exact error, and nothing issued", arguments: [
        "missing code", "unknown code", "missing verifier", "malformed verifier", "wrong verifier", "wrong redirect_uri",
        "another client's code", "expired code",
    ])
    func codeGrantErrors(_ row: String) async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let other = try await server.createCodeFlowClient(redirectURI: "https://other.example.com/cb")
            let user = try await server.enrolledUser("alice")
            let verifier = CodeFlowClient.verifier()
            let back = try await server.signIn(PageVisitor(server), client: client, user: user,
                                               challenge: CodeFlowClient.challenge(verifier))
            let code = try #require(back.redirectParameters["code"])
            let basic = TestClient(id: client.id, secret: try #require(client.secret))
            func token(_ parameters: [(String, String)], as who: TestClient? = nil) async throws -> TestServer.Answer {
                try await server.form("/token", [("grant_type", "authorization_code")] + parameters, basic: who ?? basic)
            }
            let expected: (status: Int, error: String)
            let answer: TestServer.Answer
            switch row {
            case "missing code":
                answer = try await token([("code_verifier", verifier), ("redirect_uri", client.redirectURI)])
                expected = (400, "invalid_request")
            case "unknown code":
                answer = try await token([("code", "nope"), ("code_verifier", verifier), ("redirect_uri", client.redirectURI)])
                expected = (400, "invalid_grant")
            case "missing verifier":
                answer = try await token([("code", code), ("redirect_uri", client.redirectURI)])
                expected = (400, "invalid_request")
            case "malformed verifier":
                answer = try await token([("code", code), ("code_verifier", "short"), ("redirect_uri", client.redirectURI)])
                expected = (400, "invalid_request")
            case "wrong verifier":
                answer = try await token([("code", code), ("code_verifier", CodeFlowClient.verifier()),
                                          ("redirect_uri", client.redirectURI)])
                expected = (400, "invalid_grant")
            case "wrong redirect_uri":
                answer = try await token([("code", code), ("code_verifier", verifier), ("redirect_uri", "https://rp.example.com/other")])
                expected = (400, "invalid_grant")
            case "another client's code":
                answer = try await token([("code", code), ("code_verifier", verifier), ("redirect_uri", client.redirectURI)],
                                         as: TestClient(id: other.id, secret: try #require(other.secret)))
                expected = (400, "invalid_grant")
            default:
                server.clock.advance(by: AuthorizationCode.lifetime + 1)
                answer = try await token([("code", code), ("code_verifier", verifier), ("redirect_uri", client.redirectURI)])
                expected = (400, "invalid_grant")
            }
            #expect(answer.status == expected.status, "\(row)")
            #expect(answer.error == expected.error, "\(row): \(answer.errorDescription ?? "")")
            #expect(answer["access_token"] == nil)
            if row != "expired code" {
                // Nothing was spent: the right request still redeems the code.
                let good = try await server.redeem(code, client: client, verifier: verifier)
                #expect(good.status == 200, "\(row): the code still works after the refused request")
            }
        }
    }

    // MARK: - Pushed requests and public clients

    @Test("A pushed request (RFC 9126) is used once by its request_uri; a client that must push is refused without one")
    func pushedAuthorizationRequests() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient(extra: ["require_pushed_authorization_requests": true])
            let basic = TestClient(id: client.id, secret: try #require(client.secret))
            let challenge = CodeFlowClient.challenge(CodeFlowClient.verifier())
            let direct = try await PageVisitor(server).get(
                "/authorize" + TestServer.authorizationQuery(client, challenge: challenge))
            #expect(direct.redirectParameters["error"] == "invalid_request")

            let pushed = try await server.form("/par", [
                ("response_type", "code"), ("redirect_uri", client.redirectURI), ("scope", "openid"), ("state", "s1"),
                ("code_challenge", challenge), ("code_challenge_method", "S256"),
            ], basic: basic)
            #expect(pushed.status == 201)
            let requestURI = try #require(pushed["request_uri"] as? String)
            #expect(requestURI.hasPrefix("urn:ietf:params:oauth:request_uri:"))
            #expect(pushed["expires_in"] as? Int == 90)
            let path = "/authorize?" + TestServer.formEncoded([("client_id", client.id), ("request_uri", requestURI)])
            let page = try await PageVisitor(server).get(path)
            #expect(page.status == 200)
            #expect(page.hidden("attempt") != nil)
            let again = try await PageVisitor(server).get(path)
            #expect(again.status == 400)
            #expect(again.text.contains("<code>invalid_request_uri</code>"))

            let badPush = try await server.form("/par", [
                ("response_type", "code"), ("redirect_uri", "https://evil.example.com/"), ("scope", "openid"),
                ("code_challenge", challenge), ("code_challenge_method", "S256"),
            ], basic: basic)
            #expect(badPush.status == 400)
            #expect(badPush.error == "invalid_request")
        }
    }

    @Test("A public client has no secret, redeems its code with its id and PKCE, and is refused at the CIBA endpoints")
    func publicClient() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient(redirectURI: "http://127.0.0.1/callback", isPublic: true)
            #expect(client.secret == nil)
            let user = try await server.enrolledUser("alice")
            let verifier = CodeFlowClient.verifier()
            let loopback = CodeFlowClient(id: client.id, secret: nil, redirectURI: "http://127.0.0.1:53123/callback")
            let back = try await server.signIn(
                PageVisitor(server), client: loopback, user: user, challenge: CodeFlowClient.challenge(verifier))
            #expect(back.header("Location")?.hasPrefix("http://127.0.0.1:53123/callback?") == true, "any loopback port (RFC 8252 §7.3)")
            let code = try #require(back.redirectParameters["code"])
            let tokens = try await server.redeem(code, client: loopback, verifier: verifier)
            #expect(tokens.status == 200, "\(tokens.errorDescription ?? "")")

            let ciba = try await server.form("/bc-authorize", [("client_id", client.id), ("scope", "openid"), ("login_hint", "alice")])
            #expect(ciba.status == 401)
            #expect(ciba.error == "invalid_client")
            let grant = try await server.form("/token", [("client_id", client.id), ("grant_type", "urn:openid:params:grant-type:ciba"),
                                                        ("auth_req_id", "x")])
            #expect(grant.error == "unauthorized_client")
            let secretless = try await server.form("/token", [
                ("client_id", try await server.createCodeFlowClient().id), ("grant_type", "authorization_code"), ("code", code),
                ("code_verifier", verifier),
            ])
            #expect(secretless.status == 401, "a confidential client's id alone proves nothing")
            #expect(secretless.error == "invalid_client")
        }
    }
}
