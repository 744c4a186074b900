import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// One documented error of an OAuth endpoint (`docs/ciba.md`), the request that provokes it,
/// and what the answer must carry: status, `error`, the fixed `error_description` where the
/// table gives one, `Retry-After` where waiting helps, and `WWW-Authenticate` on a 401 only.
struct ErrorRow<Fixture: Sendable>: Sendable, CustomTestStringConvertible {
    let name: String
    let status: Int
    let error: String
    var description: String? = nil
    var retryAfter: String? = nil
    /// Builds what the row needs on the fixture's server and sends the request.
    let send: @Sendable (Fixture) async throws -> TestServer.Answer

    var testDescription: String { name }

    /// Every answer of these endpoints, error or not, is JSON no cache keeps; a 401 names the
    /// Basic scheme and the issuer, and no other status challenges.
    func check(_ answer: TestServer.Answer, realm: String) throws {
        #expect(answer.status == status, "\(name): \(answer.error ?? "") \(answer.errorDescription ?? "")")
        #expect(answer.error == error, "\(name): \(answer.errorDescription ?? "")")
        if let description { #expect(answer.errorDescription == description, "\(name)") }
        #expect(answer.header("Retry-After") == retryAfter, "\(name): Retry-After")
        #expect(answer.header("WWW-Authenticate") == (status == 401 ? "Basic realm=\"\(realm)\"" : nil), "\(name)")
        #expect(answer.header("Content-Type") == "application/json", "\(name)")
        #expect(answer.header("Cache-Control") == "no-store", "\(name)")
        #expect(answer.header("Pragma") == "no-cache", "\(name)")
        try CIBAEndpointTests.expectOAuthErrorShape(answer, name)
    }
}

/// The rows of `bc-authorize`'s error table, of its request rules and of client authentication
/// that no other table covers: each provoked once, on one server.
@Suite("Error table: bc-authorize")
struct ErrorTableBackchannelTests {
    /// A poll client and `alice`, who has one device and no user code.
    struct Fixture: Sendable {
        let server: TestServer
        let client: TestClient

        func start(_ parameters: [(String, String)], as client: TestClient? = nil, path: String = "/bc-authorize")
            async throws -> TestServer.Answer {
            try await server.rawForm(path, parameters, basic: client ?? self.client)
        }

        /// A client registered for user codes, and an enrolled user `name` with `code`, if any.
        func userCodeClient(user name: String, code: String?) async throws -> TestClient {
            let user = try await server.enrolledUser(name)
            if let code {
                #expect(try await server.admin(
                    "PATCH", "/admin/v1/tenants/default/users/\(user.userID)", json: ["user_code": code]).status == 200)
            }
            let (id, secret) = try await server.registerClient(["backchannel_user_code_parameter": true, "name": "Coded \(name)"])
            return TestClient(id: id, secret: try #require(secret))
        }
    }

    typealias Row = ErrorRow<Fixture>
    static let hint = [("scope", "openid"), ("login_hint", "alice")]

    static let rows: [Row] = [
        Row(name: "0: over the client's rate limit", status: 429, error: "slow_down",
            description: "the client may send 1 authentication requests a minute; retry after 120 seconds",
            retryAfter: "120") { fixture in
            let (id, secret) = try await fixture.server.registerClient(["backchannel_requests_per_minute": 1, "name": "Limited"])
            let limited = TestClient(id: id, secret: try #require(secret))
            _ = try await fixture.server.startApproval(limited, user: "alice")
            return try await fixture.start(hint, as: limited)
        },
        Row(name: "1: a push client of a tenant that refuses push mode", status: 400, error: "unauthorized_client",
            description: "this tenant does not deliver tokens in push mode; register the client for poll or ping") { fixture in
            let server = fixture.server
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "strict", "display_name": "Strict"]).status == 201)
            try await server.setPolicy(["push_delivery_allowed": false], tenant: "strict")
            let push = try await server.createClient(mode: "push", tenant: "strict")
            return try await fixture.start(hint + [("client_notification_token", "rp-token-1")], as: push, path: "/t/strict/bc-authorize")
        },
        Row(name: "3: an unsigned request of a client that must sign", status: 400, error: "invalid_request",
            description: "this client must send its authentication request signed, as request") { fixture in
            let signer = try await fixture.server.keyClient(method: "client_secret_basic", extra: ["require_signed_request_object": true])
            return try await fixture.start(hint, as: try signer.basic)
        },
        Row(name: "14: a malformed client_notification_token", status: 400, error: "invalid_request",
            description: "client_notification_token must be at most 1024 characters of the RFC 6750 b64token syntax") { fixture in
            try await fixture.start(hint + [("client_notification_token", "two words")])
        },
        Row(name: "15: a ping client without client_notification_token", status: 400, error: "invalid_request",
            description: "client_notification_token is required for a client of the ping delivery mode") { fixture in
            try await fixture.start(hint, as: try await fixture.server.createClient(name: "Pinged", mode: "ping"))
        },
        Row(name: "17: a user_code of 257 characters", status: 400, error: "invalid_request",
            description: "user_code is longer than 256 characters") { fixture in
            let coded = try await fixture.userCodeClient(user: "long", code: "4711")
            return try await fixture.start(
                [("scope", "openid"), ("login_hint", "long"), ("user_code", String(repeating: "7", count: 257))], as: coded)
        },
        Row(name: "20: a login_hint_token past its exp", status: 400, error: "expired_login_hint_token",
            description: "login_hint_token has expired") { fixture in
            let server = fixture.server
            let signer = try await server.keyClient(method: "client_secret_basic")
            let token = try signer.key.jwt([
                "iss": .string(signer.id), "aud": .string(server.base), "iat": server.epoch(-600), "exp": server.epoch(-60),
                "sub_id": .object(["format": .string("opaque"), "id": .string("alice")]),
            ])
            return try await fixture.start([("scope", "openid"), ("login_hint_token", token)], as: try signer.basic)
        },
        Row(name: "23: a user_code for a user who has none", status: 400, error: "invalid_user_code",
            description: "the user has set no user code; send none") { fixture in
            let coded = try await fixture.userCodeClient(user: "uncoded", code: nil)
            return try await fixture.start([("scope", "openid"), ("login_hint", "uncoded"), ("user_code", "4711")], as: coded)
        },
        Row(name: "24: the right user_code while the code is locked", status: 403, error: "access_denied",
            description: "too many wrong user codes; the user code is not checked for 900 more seconds",
            retryAfter: "900") { fixture in
            let coded = try await fixture.userCodeClient(user: "locked", code: "4711")
            for _ in 0..<5 {
                _ = try await fixture.start([("scope", "openid"), ("login_hint", "locked"), ("user_code", "0000")], as: coded)
            }
            return try await fixture.start([("scope", "openid"), ("login_hint", "locked"), ("user_code", "4711")], as: coded)
        },
        Row(name: "25: no user_code for a user who has one", status: 400, error: "missing_user_code",
            description: "user_code is required for this user") { fixture in
            let coded = try await fixture.userCodeClient(user: "forgetful", code: "4711")
            return try await fixture.start([("scope", "openid"), ("login_hint", "forgetful")], as: coded)
        },
        Row(name: "26: a wrong user_code", status: 400, error: "invalid_user_code", description: "user_code is wrong") { fixture in
            let coded = try await fixture.userCodeClient(user: "mistaken", code: "4711")
            return try await fixture.start([("scope", "openid"), ("login_hint", "mistaken"), ("user_code", "1234")], as: coded)
        },
        Row(name: "26: the fifth wrong user_code in a row", status: 403, error: "access_denied",
            description: "too many wrong user codes; the user code is not checked for 900 more seconds",
            retryAfter: "900") { fixture in
            let coded = try await fixture.userCodeClient(user: "guesser", code: "4711")
            for _ in 0..<4 {
                let wrong = try await fixture.start([("scope", "openid"), ("login_hint", "guesser"), ("user_code", "0000")], as: coded)
                #expect(wrong.error == "invalid_user_code")
            }
            return try await fixture.start([("scope", "openid"), ("login_hint", "guesser"), ("user_code", "0000")], as: coded)
        },
        Row(name: "28: a user who reported a request they did not make", status: 403, error: "access_denied",
            description: "the user reported a request they did not make; new requests are refused for 600 more seconds",
            retryAfter: "600") { fixture in
            let server = fixture.server
            let reporter = try await server.enrolledUser("reporter")
            try await SQLUserRepository().suppressRequests(
                userID: reporter.userID, until: server.clock.now.addingTimeInterval(600), on: server.database)
            return try await fixture.start([("scope", "openid"), ("login_hint", "reporter")])
        },
        Row(name: "30: a user sent the tenant's limit of requests this minute", status: 403, error: "access_denied",
            description: "the user was sent 5 requests in the last minute, the most allowed", retryAfter: "60") { fixture in
            _ = try await fixture.server.enrolledUser("busy")
            for _ in 0..<5 { _ = try await fixture.server.startApproval(fixture.client, user: "busy") }
            return try await fixture.start([("scope", "openid"), ("login_hint", "busy")])
        },
        Row(name: "a body over 16384 bytes", status: 400, error: "invalid_request",
            description: "the request body exceeds 16384 bytes") { fixture in
            try await fixture.start(hint + [("binding_message", String(repeating: "a", count: 16_384))])
        },
        Row(name: "a body that is not UTF-8", status: 400, error: "invalid_request",
            description: "the request body is not valid form encoding of UTF-8 text") { fixture in
            try await fixture.server.rawForm("/bc-authorize", [], basic: fixture.client, body: "scope=openid&login_hint=%ff")
        },
        Row(name: "a JSON body", status: 400, error: "invalid_request",
            description: "the request body must be application/x-www-form-urlencoded") { fixture in
            try await fixture.server.rawForm(
                "/bc-authorize", [], basic: fixture.client, body: #"{"scope":"openid"}"#, contentType: "application/json")
        },
    ]

    @Test("every row of the bc-authorize error table no other table covers gets its exact answer")
    func backchannelRows() async throws {
        try await TestServer.routed(clock: ClientRateLimitTests.minuteClock()) { server in
            let fixture = Fixture(server: server, client: try await server.createClient())
            _ = try await server.enrolledUser("alice")
            for row in Self.rows {
                try row.check(try await row.send(fixture), realm: server.base)
            }
        }
    }

    // MARK: - Client authentication, at both endpoints

    /// A server, a poll client, and the endpoint a row is sent to.
    struct Endpoint: Sendable {
        let server: TestServer
        let client: TestClient
        let path: String
    }

    static let authenticationRows: [ErrorRow<Endpoint>] = [
        .init(name: "no credentials", status: 401, error: "invalid_client",
              description: "client authentication is required: client_secret_basic, client_secret_post or private_key_jwt") {
            endpoint in try await endpoint.server.rawForm(endpoint.path, hint)
        },
        .init(name: "Basic and client_secret at once", status: 400, error: "invalid_request",
              description: "use one client authentication method: Basic, client_secret or client_assertion") { endpoint in
            try await endpoint.server.rawForm(
                endpoint.path, hint + [("client_secret", endpoint.client.secret)], basic: endpoint.client)
        },
        .init(name: "a Bearer Authorization", status: 401, error: "invalid_client",
              description: "clients authenticate with the Basic scheme, with client_id and client_secret, or with client_assertion") {
            endpoint in try await endpoint.server.rawForm(endpoint.path, hint, authorization: "Bearer abc")
        },
        .init(name: "Basic credentials that are not base64", status: 401, error: "invalid_client",
              description: "the Basic credentials are not base64 of form-encoded client_id:client_secret") { endpoint in
            try await endpoint.server.rawForm(endpoint.path, hint, authorization: "Basic !!!")
        },
        .init(name: "Basic credentials and another client's client_id", status: 400, error: "invalid_request",
              description: "client_id names another client than the client's credentials") { endpoint in
            try await endpoint.server.rawForm(endpoint.path, hint + [("client_id", "cli_someone_else")], basic: endpoint.client)
        },
        .init(name: "client_assertion without client_assertion_type", status: 401, error: "invalid_client",
              description: "client_assertion and client_assertion_type are sent together") { endpoint in
            try await endpoint.server.rawForm(endpoint.path, hint + [("client_assertion", "a.b.c")])
        },
        .init(name: "another client_assertion_type", status: 401, error: "invalid_client",
              description: "client_assertion_type must be urn:ietf:params:oauth:client-assertion-type:jwt-bearer") {
            endpoint in
            try await endpoint.server.rawForm(
                endpoint.path, hint + [("client_assertion_type", "urn:example:saml"), ("client_assertion", "a.b.c")])
        },
        .init(name: "a wrong secret", status: 401, error: "invalid_client", description: "client authentication failed") {
            endpoint in
            try await endpoint.server.rawForm(
                endpoint.path, hint, basic: TestClient(id: endpoint.client.id, secret: endpoint.client.secret + "x"))
        },
        .init(name: "the secret of a private_key_jwt client", status: 401, error: "invalid_client",
              description: "client authentication failed") { endpoint in
            let signer = try await endpoint.server.keyClient()
            return try await endpoint.server.rawForm(endpoint.path, hint, basic: TestClient(id: signer.id, secret: "css_guessed"))
        },
    ]

    @Test("every client authentication error is answered alike at bc-authorize and the token endpoint")
    func authenticationRows() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            for path in ["/bc-authorize", "/token"] {
                for row in Self.authenticationRows {
                    try row.check(try await row.send(Endpoint(server: server, client: client, path: path)), realm: server.base)
                }
            }
        }
    }
}
