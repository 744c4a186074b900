import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// CIBA ping and push modes: the client's notification endpoint is a real HTTP server that
/// records each call; the bearer token, the body and the ID token's bindings are checked as a
/// client would check them. The requests refused before anything is sent drive the router in
/// memory.
@Suite("CIBA ping and push callbacks")
struct ClientNotificationTests {
    /// Runs `body` with a server whose notification dispatcher polls often, and a receiver
    /// standing in for the client's endpoint.
    private func withClientEndpoint(_ engine: Engine, _ body: (TestServer, WebhookReceiver) async throws -> Void) async throws {
        try await TestServer.withReceiver(engine, configure: { $0.clientNotifications.pollInterval = .milliseconds(50) }) {
            server, receiver in
            receiver.acceptUnsigned()
            try await body(server, receiver)
        }
    }

    /// The endpoint of a client whose requests are refused before anything could be sent to it
    /// (tests with the router driven in memory, where no dispatcher runs).
    static let unusedEndpoint = "https://rp.example.com/notify"

    private func client(_ server: TestServer, mode: String, endpoint: String) async throws -> TestClient {
        let answer = try await server.admin("POST", "/admin/v1/tenants/default/clients", json: [
            "name": "Bank", "scopes": ["openid"], "token_delivery_mode": mode, "notification_endpoint": endpoint,
        ])
        #expect(answer.status == 201, "\(answer.errorDescription ?? "")")
        let client = try #require(answer["client"] as? [String: any Sendable])
        return TestClient(id: try #require(client["client_id"] as? String), secret: try #require(answer["client_secret"] as? String))
    }

    private func start(_ server: TestServer, _ client: TestClient, token: String = "cnt-4f9a") async throws -> TestServer.Answer {
        try await server.bcAuthorize(client, [
            ("scope", "openid"), ("login_hint", "ada"), ("binding_message", "Pay 42"), ("client_notification_token", token),
        ])
    }

    private func calls(_ receiver: WebhookReceiver, count: Int = 1) async throws -> [WebhookReceiver.Call] {
        try await eventually("\(count) call(s) reach the client") { receiver.calls.count >= count }
        return receiver.calls
    }

    /// The calls to the client of one request, as the administration API's delivery view lists them.
    private func clientCalls(_ server: TestServer, _ requestID: String) async throws -> [[String: any Sendable]] {
        let view = try await server.admin("GET", "/admin/v1/tenants/default/approvals/\(requestID)/deliveries")
        return view["client_notifications"] as? [[String: any Sendable]] ?? []
    }

    /// OpenID Connect Core §3.1.3.6: the left half of SHA-256 of the token's ASCII, base64url.
    static func halfHash(_ token: String) -> String {
        Data(Data(SHA256.hash(data: Data(token.utf8))).prefix(16)).base64URLEncodedString
    }

    @Test("the hash of a token follows OpenID Connect Core, as CIBA's own push example gives it")
    func halfHashVector() {
        #expect(Self.halfHash("G5kXH2wHvUra0sHlDy1iTkDJgsgUO1bN") == "Wt0kVFXMacqvnHeyU0001w")
        #expect(Self.halfHash("4bwc0ESC_IAhflf-ACC_vjD_ltc11ne-8gFPfA2Kx16") == "sHahCuSpXCRg5mkDDvvr4w")
    }

    @Test("ping: the decision is announced with the client's bearer token and the auth_req_id alone",
          arguments: Engine.available)
    func pingAfterApproval(engine: Engine) async throws {
        try await withClientEndpoint(engine) { server, receiver in
            let client = try await client(server, mode: "ping", endpoint: receiver.url)
            let ada = try await server.enrolledUser("ada")
            let started = try await start(server, client)
            #expect(started.status == 200 && started["interval"] as? Int == 5, "\(started.errorDescription ?? "")")
            let authReqID = try #require(started["auth_req_id"] as? String)
            #expect(receiver.calls.isEmpty, "nothing is sent before the user decides")
            #expect(try await ada.device.decideNewest(.approve).status == 200)
            let call = try #require(try await calls(receiver).first)
            #expect(call.headers["authorization"] == "Bearer cnt-4f9a")
            #expect(call.headers["content-type"] == "application/json")
            #expect(call.body == Data(#"{"auth_req_id":"\#(authReqID)"}"#.utf8))
            server.clock.advance(by: 6)
            #expect(try await server.token(client, authReqID).status == 200)
        }
    }

    @Test("ping: a denial is announced too; the client then learns access_denied at /token", arguments: Engine.available)
    func pingAfterDenial(engine: Engine) async throws {
        try await withClientEndpoint(engine) { server, receiver in
            let client = try await client(server, mode: "ping", endpoint: receiver.url)
            let ada = try await server.enrolledUser("ada")
            let authReqID = try #require(try await start(server, client)["auth_req_id"] as? String)
            _ = try await ada.device.decideNewest(.deny)
            _ = try await calls(receiver)
            server.clock.advance(by: 6)
            #expect(try await server.token(client, authReqID).error == "access_denied")
        }
    }

    @Test("ping: a 5xx is retried, a 401 or a redirect is not", arguments: Engine.available)
    func pingRetries(engine: Engine) async throws {
        try await withClientEndpoint(engine) { server, receiver in
            let client = try await client(server, mode: "ping", endpoint: receiver.url)
            let ada = try await server.enrolledUser("ada")
            receiver.answer([.status(503)], then: Reply(status: 204, body: ""))
            _ = try await start(server, client)
            let requestID = try #require(try await ada.device.inbox().first?.id)
            _ = try await ada.device.decideNewest(.approve)
            _ = try await calls(receiver)
            // The retry is scheduled on the server's clock when the failure is recorded: move the
            // clock only once it has been.
            try await eventually("the failure is recorded and the call rescheduled") {
                try await clientCalls(server, requestID).first?["status"] as? String == "queued"
            }
            server.clock.advance(by: 3)
            #expect(try await calls(receiver, count: 2).count == 2)
            try await eventually("the retry is recorded as sent") {
                let calls = try await clientCalls(server, requestID)
                return calls.first?["status"] as? String == "sent" && calls.first?["attempts"] as? Int == 2
            }

            for refusal in [WebhookReceiver.Reply.status(401), Reply(status: 301, headers: ["Location": receiver.url + "/moved"])] {
                server.clock.advance(by: 61)
                let before = receiver.calls.count
                receiver.answer([refusal], then: .status(500))
                _ = try await start(server, client)
                _ = try await ada.device.decideNewest(.approve)
                _ = try await calls(receiver, count: before + 1)
                server.clock.advance(by: 30)
                try await Task.sleep(for: .milliseconds(400))
                #expect(receiver.calls.count == before + 1, "HTTP \(refusal.status) is not answered with another call")
            }
        }
    }

    @Test("push: the tokens reach the client with the ID token bound to them and to the request",
          arguments: Engine.available)
    func pushTokens(engine: Engine) async throws {
        try await withClientEndpoint(engine) { server, receiver in
            let client = try await client(server, mode: "push", endpoint: receiver.url)
            let ada = try await server.enrolledUser("ada")
            let started = try await start(server, client, token: "push-77")
            #expect(started.status == 200 && started["interval"] == nil, "a push client never polls")
            let authReqID = try #require(started["auth_req_id"] as? String)
            server.clock.advance(by: 6)
            let polled = try await server.token(client, authReqID)
            #expect(polled.status == 400 && polled.error == "unauthorized_client")
            _ = try await ada.device.decideNewest(.approve)
            let call = try #require(try await calls(receiver).first)
            #expect(call.headers["authorization"] == "Bearer push-77")
            let body = try #require(call.json)
            #expect(body["auth_req_id"] as? String == authReqID && body["token_type"] as? String == "Bearer")
            let accessToken = try #require(body["access_token"] as? String)
            let claims = try server.verifiedClaims(try #require(body["id_token"] as? String), keys: try await server.jwks()).claims
            #expect(claims["urn:openid:params:jwt:claim:auth_req_id"] as? String == authReqID)
            #expect(claims["at_hash"] as? String == Self.halfHash(accessToken))
            #expect(claims["urn:openid:params:jwt:claim:rt_hash"] == nil, "no refresh token, no rt_hash")
        }
    }

    @Test("push: a denial and an expiry are delivered as CIBA errors", arguments: Engine.available)
    func pushErrors(engine: Engine) async throws {
        try await withClientEndpoint(engine) { server, receiver in
            let client = try await client(server, mode: "push", endpoint: receiver.url)
            let ada = try await server.enrolledUser("ada")
            let denied = try #require(try await start(server, client)["auth_req_id"] as? String)
            _ = try await ada.device.decideNewest(.deny)
            let first = try #require(try await calls(receiver).first?.json)
            #expect(first["auth_req_id"] as? String == denied && first["error"] as? String == "access_denied")

            let expiring = try #require(try await server.bcAuthorize(client, [
                ("scope", "openid"), ("login_hint", "ada"), ("client_notification_token", "cnt-4f9a"), ("requested_expiry", "30"),
            ])["auth_req_id"] as? String)
            server.clock.advance(by: 31)
            let second = try #require(try await calls(receiver, count: 2).last?.json)
            #expect(second["auth_req_id"] as? String == expiring && second["error"] as? String == "expired_token")
        }
    }

    @Test("a tenant can refuse push mode; discovery then leaves it out")
    func pushSwitchedOff() async throws {
        try await TestServer.routed { server in
            let client = try await client(server, mode: "push", endpoint: Self.unusedEndpoint)
            _ = try await server.enrolledUser("ada")
            try await server.setPolicy(["push_delivery_allowed": false])
            let refused = try await start(server, client)
            #expect(refused.status == 400 && refused.error == "unauthorized_client")
            let discovery = try await server.call("GET", "/.well-known/openid-configuration")
            #expect(discovery["backchannel_token_delivery_modes_supported"] as? [String] == ["poll", "ping"])
        }
    }

    @Test("a ping or push client must send a client_notification_token")
    func notificationTokenRequired() async throws {
        try await TestServer.routed { server in
            _ = try await server.enrolledUser("ada")
            for mode in ["ping", "push"] {
                let client = try await client(server, mode: mode, endpoint: Self.unusedEndpoint)
                let answer = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")])
                #expect(answer.status == 400 && answer.error == "invalid_request", "\(mode)")
            }
        }
    }
}

private typealias Reply = WebhookReceiver.Reply
