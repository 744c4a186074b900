import Foundation
import Testing
@testable import CountersignServer

/// A client that goes away in the middle of its request body (or is timed out there) sent no
/// request: nothing it began is acted on, and it failed no authentication. Only a credential
/// that was presented and found wrong counts towards `countersign_authentication_failures_total`
/// and the per-address throttle, so that clients behind one proxy cannot use up each other's
/// budget by dropping connections.
@Suite("Abandoned request bodies")
struct AbandonedBodyTests {
    /// The endpoints that take a secret, each with a body that declares 16,000 bytes and brings one.
    static let endpoints: [(method: String, path: String, contentType: String)] = [
        ("POST", "/token", "application/x-www-form-urlencoded"),
        ("POST", "/introspect", "application/x-www-form-urlencoded"),
        ("POST", "/revoke", "application/x-www-form-urlencoded"),
        ("POST", "/bc-authorize", "application/x-www-form-urlencoded"),
        ("POST", "/bc-authorize/receipt", "application/x-www-form-urlencoded"),
        ("POST", "/totp/verify", "application/x-www-form-urlencoded"),
        ("POST", "/admin/v1/tenants/default/users", "application/json"),
    ]

    @Test("a body abandoned without credentials is no failed authentication: more of them than the limit leave the address its budget",
          arguments: endpoints.map { "\($0.method) \($0.path)" })
    func abandonedBodyIsNoFailedAuthentication(endpoint: String) async throws {
        let (method, path) = (String(endpoint.prefix { $0 != " " }), String(endpoint.drop { $0 != " " }.dropFirst()))
        let contentType = try #require(Self.endpoints.first { $0.path == path }).contentType
        try await TestServer.with(.sqlite, configure: Self.shortBodyWait) { server in
            let client = try await server.createClient()
            let before = try await Self.postsAnswered(server)
            let abandoned = FailedAuthenticationThrottle.defaultLimit + 1
            for _ in 0..<abandoned {
                let connection = try RawHTTPConnection(port: server.running.port)
                try connection.send(Array((
                    "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: \(contentType)\r\n"
                        + "Content-Length: 16000\r\n\r\nx").utf8))
            }
            try await Self.waitUntilPostsAnswered(server, count: before + abandoned)

            let metrics = try await Self.metrics(server)
            #expect(!metrics.contains("countersign_authentication_failures_total"), "\(metrics)")
            if !path.hasPrefix("/admin/") {
                // The admin API asks for its key before it reads a body: a request without one
                // is a 401, counted as an answer but not as a failed authentication.
                #expect(!metrics.contains(#"status="401""#), "a cut-off body is a 400, not a missing credential: \(metrics)")
            }
            let introspection = try await server.rawForm("/introspect", [("token", "unknown")], basic: client)
            #expect(introspection.status == 200, "the right credentials still pass: \(introspection.errorDescription ?? "")")
            #expect(introspection["active"] as? Bool == false)
            #expect(try await server.admin("GET", "/admin/v1/tenants/default/users").status == 200)
        }
    }

    @Test("a body cut off before its declared length is refused as cut off, and nothing it began is started")
    func cutOffBodyIsNotActedOn() async throws {
        try await TestServer.with(.sqlite, configure: Self.shortBodyWait) { server in
            let client = try await server.createClient()
            _ = try await server.enrolledUser("alice")
            let complete = "scope=openid&login_hint=alice&binding_message=Pay"
            let credentials = Data("\(client.id):\(client.secret)".utf8).base64EncodedString()
            let before = try await Self.postsAnswered(server)
            let connection = try RawHTTPConnection(port: server.running.port)
            try connection.send(Array((
                "POST /bc-authorize HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic \(credentials)\r\n"
                    + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(complete.utf8.count + 20)\r\n\r\n"
                    + complete).utf8))
            connection.finishSending()
            // The server closes the connection once it knows the body will not come: answered
            // 400 when the request reached the router first, or closed with no answer when the
            // end of input reached the HTTP decoder mid-body first (a race of one read).
            let end = await connection.closure(within: .seconds(20))
            #expect(end.closed, "the server kept the cut-off connection open")
            if end.received.hasPrefix("HTTP/1.1") {
                #expect(end.received.hasPrefix("HTTP/1.1 400"), "\(end.received.prefix(200))")
                try await Self.waitUntilPostsAnswered(server, count: before + 1)
                let metrics = try await Self.metrics(server)
                #expect(metrics.contains(#"countersign_ciba_requests_total{endpoint="bc-authorize",outcome="invalid_request"} 1"#),
                        "\(metrics)")
            }
            let metrics = try await Self.metrics(server)
            #expect(!metrics.contains(#"endpoint="bc-authorize",outcome="ok""#))
            #expect(!metrics.contains("countersign_approval_requests_total"))
        }
    }

    @Test("a request with no credentials at all is answered 401 but not counted; a wrong credential is")
    func onlyPresentedCredentialsCount() async throws {
        try await TestServer.with(.sqlite, configure: FailedAuthenticationThrottleTests.limited(2)) { server in
            for _ in 0..<3 {
                let client = try await server.rawForm("/introspect", [("token", "x")])
                #expect(client.status == 401)
                let admin = try await server.call("GET", "/admin/v1/tenants/default/users")
                #expect(admin.status == 401)
            }
            let unchecked = try await Self.metrics(server)
            #expect(!unchecked.contains("countersign_authentication_failures_total"))
            let admin = try await server.admin("GET", "/admin/v1/tenants/default/users")
            #expect(admin.status == 200)

            let wrong = try await server.rawForm(
                "/introspect", [("token", "x")], basic: TestClient(id: "cli_unknown", secret: "css_wrong"))
            #expect(wrong.status == 401)
            let checked = try await Self.metrics(server)
            #expect(checked.contains("countersign_authentication_failures_total 1"))
        }
    }

    static func metrics(_ server: TestServer) async throws -> String {
        String(decoding: try await server.call("GET", "/metrics").data, as: UTF8.self)
    }

    /// A body that stops coming ends at the client's FIN, which the server does not always see
    /// at once (a half-closed connection may stay open for the rest of the body), or at the
    /// latest when no byte came for the body progress timeout (30 s by default): 2 s here, so
    /// that either way the answer comes well within `waitUntilPostsAnswered`'s 20 s.
    static func shortBodyWait(_ configuration: inout ServerConfiguration) {
        configuration.connections.bodyProgressTimeout = .seconds(2)
    }

    /// POST requests the server has answered so far, by `countersign_http_requests_total`.
    static func postsAnswered(_ server: TestServer) async throws -> Int {
        try await metrics(server).split(separator: "\n")
            .filter { $0.hasPrefix(#"countersign_http_requests_total{method="POST""#) }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
            .reduce(0, +)
    }

    /// Waits for the server to have answered `count` POST requests: the abandoned connections
    /// are answered after the client has gone, when nobody is waiting to read the answer.
    static func waitUntilPostsAnswered(_ server: TestServer, count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        var answered = try await postsAnswered(server)
        while answered < count {
            try #require(ContinuousClock.now < deadline, "the server answered \(answered) of \(count) POST requests")
            try await Task.sleep(for: .milliseconds(50))
            answered = try await postsAnswered(server)
        }
    }
}
