import Foundation
import Testing
@testable import CountersignServer

/// Failed client and admin authentication is throttled per source and per credential, with
/// `Retry-After`, and counted in the metrics.
@Suite("Failed authentication throttle")
struct FailedAuthenticationThrottleTests {
    static func limited(_ limit: Int) -> (inout ServerConfiguration) -> Void {
        { $0.failedAuthenticationLimit = limit }
    }

    @Test("a source that fails too often is refused with 429 slow_down and Retry-After until its failures age out",
          arguments: Engine.available)
    func sourceIsThrottled(engine: Engine) async throws {
        let clock = TestClock()
        try await TestServer.with(engine, clock: clock, configure: Self.limited(5)) { server in
            let client = try await server.createClient()
            let wrong = TestClient(id: client.id, secret: "css_wrong")
            for attempt in 1...5 {
                clock.advance(by: 2)
                let failed = try await server.rawForm("/token", [("grant_type", "refresh_token"), ("refresh_token", "x")], basic: wrong)
                #expect(failed.status == 401, "attempt \(attempt)")
            }
            // The source now gets 429 whatever it sends: the right secret, an admin call, anything.
            let refused = try await server.rawForm("/token", [("grant_type", "refresh_token"), ("refresh_token", "x")], basic: client)
            #expect(refused.status == 429)
            #expect(refused.error == "slow_down")
            #expect(refused.header("Retry-After") == "52", "the oldest failure, 8 seconds old, ages out in 52")
            let admin = try await server.admin("GET", "/admin/v1/tenants/default/users")
            #expect(admin.status == 429)

            clock.advance(by: 53)
            let again = try await server.rawForm("/token", [("grant_type", "refresh_token"), ("refresh_token", "x")], basic: client)
            #expect(again.status == 400, "authenticated; the refresh token is what is wrong")
            #expect(again.error == "invalid_grant")
            let metrics = String(decoding: try await server.call("GET", "/metrics").data, as: UTF8.self)
            #expect(metrics.contains(#"countersign_authentication_throttled_total{limit="source"} 2"#), "\(metrics)")
            #expect(metrics.contains("countersign_authentication_failures_total 5"))
        }
    }

    @Test("a client id that fails too often gets 429 for wrong secrets from anywhere, but is never locked out",
          arguments: Engine.available)
    func clientIsThrottledNotLocked(engine: Engine) async throws {
        try await TestServer.with(engine, configure: Self.limited(3)) { server in
            let client = try await server.createClient()
            let wrong = TestClient(id: client.id, secret: "css_wrong")
            let form = [("grant_type", "refresh_token"), ("refresh_token", "x")]
            for _ in 1...3 {
                #expect(try await server.rawForm("/token", form, basic: wrong, source: "127.0.0.2").status == 401)
            }
            // From another address, whose own count is clean: the client id's count refuses a wrong secret…
            let refused = try await server.rawForm("/token", form, basic: wrong, source: "127.0.0.3")
            #expect(refused.status == 429)
            #expect(refused.error == "slow_down")
            #expect(refused.errorDescription?.contains("for this client_id") == true)
            #expect(refused.header("Retry-After") != nil)
            // …an unknown client id is counted alike, so the answer tells nothing of which ids exist…
            let unknown = TestClient(id: "cli_unknown", secret: "css_wrong")
            for _ in 1...3 {
                #expect(try await server.rawForm("/token", form, basic: unknown, source: "127.0.0.4").status == 401)
            }
            #expect(try await server.rawForm("/token", form, basic: unknown, source: "127.0.0.5").status == 429)
            // …and the right secret always passes.
            let right = try await server.rawForm("/token", form, basic: client, source: "127.0.0.3")
            #expect(right.status == 400)
            #expect(right.error == "invalid_grant", "authenticated; the refresh token is what is wrong")
        }
    }

    @Test("an admin key id that fails too often gets 429 for wrong secrets; the right key still works", arguments: Engine.available)
    func adminKeyIsThrottledNotLocked(engine: Engine) async throws {
        try await TestServer.with(engine, configure: Self.limited(3)) { server in
            let id = String(server.adminKey.prefix { $0 != "." })
            let wrong = "Bearer \(id).wrong"
            for _ in 1...3 {
                #expect(try await Self.rawGet(server, "/admin/v1/tenants/default/users", authorization: wrong, source: "127.0.0.2").status == 401)
            }
            let refused = try await Self.rawGet(server, "/admin/v1/tenants/default/users", authorization: wrong, source: "127.0.0.3")
            #expect(refused.status == 429)
            #expect(refused.error == "slow_down")
            #expect(refused.header("Retry-After") != nil)
            #expect(try await server.admin("GET", "/admin/v1/tenants/default/users").status == 200)
        }
    }

    /// A GET over a raw connection from `source`.
    static func rawGet(_ server: TestServer, _ path: String, authorization: String, source: String) async throws -> TestServer.Answer {
        try await server.rawForm(path, [], authorization: authorization, body: "", source: source, method: "GET")
    }

    @Test("devices and bearer-token callers are neither counted nor refused; every client and admin endpoint is",
          arguments: Engine.available)
    func onlyClientAndAdminEndpointsAreThrottled(engine: Engine) async throws {
        try await TestServer.with(engine, configure: Self.limited(1)) { server in
            let source = "127.0.0.6"
            let wrong = "Bearer \(server.adminKey.prefix { $0 != "." }).wrong"
            #expect(try await Self.rawGet(server, "/admin/v1/tenants", authorization: wrong, source: source).status == 401)
            let endpoints: [(method: String, path: String, throttled: Bool)] = [
                ("GET", "/device/v1/requests", false), ("GET", "/userinfo", false), ("GET", "/t/acme/device/v1/self", false),
                ("GET", "/healthz", false), ("GET", "/t/acme", false), ("POST", "/tokens", false),
                ("POST", "/token", true), ("POST", "/t/acme/token", true), ("POST", "/bc-authorize/receipt", true),
                ("POST", "/t/acme/totp/verify", true), ("GET", "/admin/v1/tenants", true),
                ("POST", "/t/acme/Mobile/SetApnsCertForClientApp", true),
            ]
            for endpoint in endpoints {
                let answer = try await server.rawForm(
                    endpoint.path, [], authorization: "Bearer x", body: "", source: source, method: endpoint.method)
                #expect((answer.status == 429) == endpoint.throttled, "\(endpoint.method) \(endpoint.path): \(answer.status)")
            }
        }
    }

    @Test("past the keys it may track, expired counts are dropped first, and all of them if too many are live")
    func trackedKeysAreBounded() {
        let clock = TestClock()
        let throttle = FailedAuthenticationThrottle(limit: 1, trackedKeys: 3, now: clock.function)
        throttle.recordFailure("source:a")
        clock.advance(by: 61)
        for key in ["source:b", "source:c", "source:d"] { throttle.recordFailure(key) }
        // Four keys: "a" expired and went; the three live ones stay.
        #expect(throttle.retryAfter("source:b") != nil)
        throttle.recordFailure("source:e")
        // Four live keys: all were forgotten.
        #expect(throttle.retryAfter("source:b") == nil)
        #expect(throttle.retryAfter("source:e") == nil)
    }

    @Test("a limit of 0 throttles nothing")
    func zeroSwitchesItOff() {
        let throttle = FailedAuthenticationThrottle(limit: 0, now: { Date() })
        for _ in 0..<1000 { throttle.recordFailure("source:x") }
        #expect(throttle.retryAfter("source:x") == nil)
    }
}
