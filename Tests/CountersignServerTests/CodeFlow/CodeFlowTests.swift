import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The authorization code flow with PKCE through the hosted sign-in (OpenID Connect Core §3.1,
/// RFC 6749 §4.1, RFC 7636, RFC 9207), driven in memory, the device being the SDK.
@Suite("Code flow: authorization endpoint, hosted sign-in, code grant")
struct CodeFlowTests {
    @Test("A sign-in approved on the phone gives a code with state and iss, and the code gives tokens with nonce, auth_time, acr and amr")
    func signInByApprovingOnThePhone() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let user = try await server.enrolledUser("alice")
            let browser = PageVisitor(server)
            let verifier = CodeFlowClient.verifier()
            let back = try await server.signIn(browser, client: client, user: user, challenge: CodeFlowClient.challenge(verifier))
            #expect(back.status == 303)
            #expect(back.header("Location")?.hasPrefix(client.redirectURI + "?") == true)
            let parameters = back.redirectParameters
            #expect(parameters["state"] == "xyz")
            #expect(parameters["iss"] == server.base)
            let code = try #require(parameters["code"])
            // The session cookie of an https server: __Host-, Secure, HttpOnly, SameSite=Lax, Path=/, no Domain.
            let cookie = try #require(back.header("Set-Cookie"))
            #expect(cookie.hasPrefix("__Host-countersign-session="))
            #expect(cookie.contains("Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"))
            #expect(cookie.contains("Path=/") && !cookie.contains("Domain"))

            let tokens = try await server.redeem(code, client: client, verifier: verifier)
            #expect(tokens.status == 200, "token: \(tokens.error ?? "") \(tokens.errorDescription ?? "")")
            let idToken = try #require(tokens["id_token"] as? String)
            let claims = try JSONValue(parsing: try CompactJWS(parsing: idToken).payload)
            #expect(claims["nonce"]?.stringValue == "n-0S6_WzA2Mj")
            #expect(claims["sub"]?.stringValue == user.userID)
            #expect(claims["aud"]?.stringValue == client.id)
            #expect(claims["iss"]?.stringValue == server.base)
            #expect(claims["auth_time"]?.integerValue != nil)
            #expect(claims["acr"]?.stringValue?.hasPrefix("urn:") == true)
            guard case .array(let amr)? = claims["amr"] else { Issue.record("amr is not an array"); return }
            #expect(!amr.isEmpty)
        }
    }

    @Test("A code used twice is invalid_grant, and the tokens of its first use are revoked (RFC 6749 §4.1.2)")
    func codeReplayRevokesWhatTheFirstUseIssued() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let user = try await server.enrolledUser("alice")
            let verifier = CodeFlowClient.verifier()
            let back = try await server.signIn(
                PageVisitor(server), client: client, user: user, challenge: CodeFlowClient.challenge(verifier))
            let code = try #require(back.redirectParameters["code"])
            let first = try await server.redeem(code, client: client, verifier: verifier)
            let accessToken = try #require(first["access_token"] as? String)
            let second = try await server.redeem(code, client: client, verifier: verifier)
            #expect(second.status == 400)
            #expect(second.error == "invalid_grant")
            let secret = try #require(client.secret)
            let introspection = try await server.form(
                "/introspect", [("token", accessToken)], basic: TestClient(id: client.id, secret: secret))
            #expect(introspection["active"] as? Bool == false)
        }
    }

    @Test("A live session answers the next request at once; prompt=login asks again; prompt=none without a session is login_required")
    func sessionAndPrompt() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let user = try await server.enrolledUser("alice")
            let browser = PageVisitor(server)
            _ = try await server.signIn(browser, client: client, user: user, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))

            let challenge = CodeFlowClient.challenge(CodeFlowClient.verifier())
            let again = try await browser.get("/authorize" + TestServer.authorizationQuery(client, challenge: challenge))
            #expect(again.status == 303)
            #expect(again.redirectParameters["code"] != nil)
            let silent = try await browser.get(
                "/authorize" + TestServer.authorizationQuery(client, challenge: challenge, extra: [("prompt", "none")]))
            #expect(silent.redirectParameters["code"] != nil)
            let login = try await browser.get(
                "/authorize" + TestServer.authorizationQuery(client, challenge: challenge, extra: [("prompt", "login")]))
            #expect(login.status == 200)
            #expect(login.text.contains("name=\"username\""))

            let stranger = PageVisitor(server)
            let refused = try await stranger.get(
                "/authorize" + TestServer.authorizationQuery(client, challenge: challenge, extra: [("prompt", "none")]))
            #expect(refused.status == 303)
            #expect(refused.redirectParameters["error"] == "login_required")
            #expect(refused.redirectParameters["state"] == "xyz")
            #expect(refused.redirectParameters["iss"] == server.base)
        }
    }

    @Test("Denied on the phone: its own page, with a way back that tells the client access_denied")
    func deniedOnThePhone() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let user = try await server.enrolledUser("alice")
            let browser = PageVisitor(server)
            let page = try await browser.get(
                "/authorize" + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
            let attempt = try #require(page.hidden("attempt"))
            _ = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", "alice")])
            let request = try #require(try await user.kit.pendingRequests().first)
            _ = try await user.kit.deny(try await user.kit.details(for: request))
            let outcome = try await browser.post("/authorize/continue", [("attempt", attempt)])
            #expect(outcome.text.contains("data-outcome=\"denied\""))
            #expect(outcome.text.contains("error=access_denied"))
        }
    }

    @Test("An unknown username and a user without a phone get the same page, and neither reveals which it was")
    func unknownUserAndUserWithoutDevice() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            _ = try await server.createUser("bob")
            func outcome(for username: String) async throws -> String {
                let browser = PageVisitor(server)
                let page = try await browser.get(
                    "/authorize" + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
                let answer = try await browser.post(
                    "/authorize/sign-in", [("attempt", try #require(page.hidden("attempt"))), ("username", username)])
                return answer.text.replacingOccurrences(of: #"value="[^"]*""#, with: "", options: .regularExpression)
            }
            let unknown = try await outcome(for: "mallory")
            let withoutPhone = try await outcome(for: "bob")
            #expect(unknown.contains("data-outcome=\"no-device\""))
            #expect(unknown == withoutPhone)
        }
    }

    @Test("Every page carries a CSP without unsafe-inline, frame-ancestors 'none', X-Frame-Options DENY and no-store")
    func pageHeaders() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let page = try await PageVisitor(server).get(
                "/authorize" + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
            let policy = try #require(page.header("Content-Security-Policy"))
            #expect(!policy.contains("unsafe-inline"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(page.header("X-Frame-Options") == "DENY")
            #expect(page.header("Cache-Control") == "no-store")
            #expect(!page.text.contains("<script>"), "no inline script")
            #expect(!page.text.contains("style="), "no inline style")
        }
    }

    @Test("A sign-in form posted without the browser's cookie, or with an unknown attempt, changes nothing and says why")
    func attemptBoundToItsBrowser() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let user = try await server.enrolledUser("alice")
            let browser = PageVisitor(server)
            let page = try await browser.get(
                "/authorize" + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
            let attempt = try #require(page.hidden("attempt"))
            let other = PageVisitor(server)
            let refused = try await other.post("/authorize/sign-in", [("attempt", attempt), ("username", "alice")])
            #expect(refused.status == 400)
            #expect(refused.text.contains("another browser"))
            let unknown = try await browser.post("/authorize/sign-in", [("attempt", "nope"), ("username", "alice")])
            #expect(unknown.status == 400)
            #expect(try await user.kit.pendingRequests().isEmpty, "no request was sent")
        }
    }

    @Test("Expired attempts, sessions, pushed requests and codes are deleted by the hourly housekeeping")
    func housekeeping() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let user = try await server.enrolledUser("alice")
            let back = try await server.signIn(PageVisitor(server), client: client, user: user,
                                               challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            #expect(back.redirectParameters["code"] != nil)
            func count(_ table: String) async throws -> Int {
                try await server.database.first("SELECT COUNT(*) AS n FROM \(raw: table)", column: "n", as: Int.self) ?? -1
            }
            for table in ["sign_in_attempts", "browser_sessions", "authorization_codes"] {
                #expect(try await count(table) == 1, "\(table) before")
            }
            server.clock.advance(by: 3 * 86_400)
            _ = try await PageVisitor(server).get(
                "/authorize" + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
            #expect(try await count("browser_sessions") == 0)
            #expect(try await count("authorization_codes") == 0)
            #expect(try await count("sign_in_attempts") == 1, "only the attempt just begun")
        }
    }

    @Test("A session of a confirmation does not answer a request for a stronger class; signing in again ends the earlier session")
    func sessionMustMeetTheRequestedClass() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let user = try await server.enrolledUser("alice")
            let browser = PageVisitor(server)
            _ = try await server.signIn(browser, client: client, user: user,
                                        challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            let first = try #require(browser.cookies["__Host-countersign-session"], "\(browser.cookies)")
            let stronger = try await browser.get("/authorize" + TestServer.authorizationQuery(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()),
                extra: [("acr_values", "urn:countersign:acr:pin")]))
            #expect(stronger.status == 200, "the sign-in page, not a code")
            #expect(stronger.hidden("attempt") != nil)
            let silent = try await browser.get("/authorize" + TestServer.authorizationQuery(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()),
                extra: [("acr_values", "urn:countersign:acr:pin"), ("prompt", "none")]))
            #expect(silent.redirectParameters["error"] == "login_required")

            _ = try await server.signIn(browser, client: client, user: user,
                                        challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()),
                                        extra: [("prompt", "login")])
            let second = try #require(browser.cookies["__Host-countersign-session"])
            #expect(second != first)
            let ended = try await server.database.first(
                "SELECT COUNT(*) AS n FROM browser_sessions WHERE revoked_at IS NOT NULL", column: "n", as: Int.self)
            #expect(ended == 1)
        }
    }
}
