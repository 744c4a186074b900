import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The per-client limit of `bc-authorize` (`ClientRateLimit`): 429 `slow_down` with
/// `Retry-After` once a client has sent its limit in the sliding minute, nothing stored for a
/// refused request, the client's own limit before the tenant's, and one count for every node.
@Suite("Client rate limit")
struct ClientRateLimitTests {
    static let request = [("scope", "openid"), ("login_hint", "alice")]

    /// A clock at the first second of a minute, so that the window arithmetic is exact.
    static func minuteClock() -> TestClock {
        TestClock(Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60))
    }

    /// A server whose tenant lets `perMinute` requests a minute through per client (and any
    /// number per user), with a client and an enrolled user `alice`.
    static func withLimit(_ engine: Engine, perMinute: Int,
                          _ body: (TestServer, TestClient, EnrolledUser) async throws -> Void) async throws {
        try await TestServer.with(engine, clock: minuteClock()) { server in
            try await server.setPolicy(["client_requests_per_minute": perMinute, "user_requests_per_minute": 0])
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            try await body(server, client, alice)
        }
    }

    @Test("the request past the limit is 429 slow_down with Retry-After, and stores nothing", arguments: Engine.available)
    func limitReached(engine: Engine) async throws {
        try await Self.withLimit(engine, perMinute: 3) { server, client, alice in
            for _ in 0..<3 { _ = try await server.startApproval(client, user: "alice") }
            let refused = try await server.bcAuthorize(client, Self.request)
            #expect(refused.status == 429)
            #expect(refused.error == "slow_down")
            #expect(refused.errorDescription == "the client may send 3 authentication requests a minute; retry after 80 seconds")
            // Three requests in this minute weigh 2 (the most that leaves room for one) 20 s into the next.
            #expect(refused.header("Retry-After") == "80")
            #expect(refused.header("Cache-Control") == "no-store")
            #expect(refused.header("WWW-Authenticate") == nil)
            try CIBAEndpointTests.expectOAuthErrorShape(refused, "rate limited")
            #expect(try await alice.device.inbox().count == 3)
            #expect(try await server.storedApprovals() == 3)
        }
    }

    @Test("the limit is checked before every other check of the request", arguments: Engine.available)
    func checkedFirst(engine: Engine) async throws {
        try await Self.withLimit(engine, perMinute: 1) { server, client, _ in
            _ = try await server.startApproval(client, user: "alice")
            for parameters in [[("login_hint", "alice")], [("scope", "openid"), ("login_hint", "nobody")],
                               [("scope", "openid"), ("login_hint", "alice"), ("request_uri", "urn:example:1")]] {
                let refused = try await server.bcAuthorize(client, parameters)
                #expect(refused.status == 429, "\(parameters)")
                #expect(refused.error == "slow_down", "\(parameters)")
            }
        }
    }

    @Test("the window slides with the clock, and refused requests are not counted", arguments: Engine.available)
    func windowSlides(engine: Engine) async throws {
        try await Self.withLimit(engine, perMinute: 3) { server, client, _ in
            for _ in 0..<3 { _ = try await server.startApproval(client, user: "alice") }
            for _ in 0..<5 { #expect(try await server.bcAuthorize(client, Self.request).status == 429) }
            server.clock.advance(by: 60)
            // A minute later the previous minute still weighs 3 × 60/60.
            let stillFull = try await server.bcAuthorize(client, Self.request)
            #expect(stillFull.status == 429)
            #expect(stillFull.header("Retry-After") == "20")
            server.clock.advance(by: 20)
            // 3 × 40/60 = 2: room for one.
            _ = try await server.startApproval(client, user: "alice")
            #expect(try await server.bcAuthorize(client, Self.request).status == 429)
            server.clock.advance(by: 40)
            // The minute before weighs 1 × 60/60: room for two.
            for _ in 0..<2 { _ = try await server.startApproval(client, user: "alice") }
            #expect(try await server.bcAuthorize(client, Self.request).status == 429)
            server.clock.advance(by: 120)
            for _ in 0..<3 { _ = try await server.startApproval(client, user: "alice") }
        }
    }

    @Test("another client is not affected by a client at its limit", arguments: Engine.available)
    func otherClientUnaffected(engine: Engine) async throws {
        try await Self.withLimit(engine, perMinute: 2) { server, client, _ in
            let other = try await server.createClient(name: "Other")
            for _ in 0..<2 { _ = try await server.startApproval(client, user: "alice") }
            #expect(try await server.bcAuthorize(client, Self.request).status == 429)
            for _ in 0..<2 { _ = try await server.startApproval(other, user: "alice") }
            #expect(try await server.bcAuthorize(other, Self.request).status == 429)
        }
    }

    @Test("a client's own limit beats the tenant's, 0 lifts it, and null gives back the tenant's", arguments: Engine.available)
    func clientOverride(engine: Engine) async throws {
        try await Self.withLimit(engine, perMinute: 2) { server, client, _ in
            let path = "/admin/v1/tenants/default/clients/\(client.id)"
            let raised = try await server.admin("PATCH", path, json: ["backchannel_requests_per_minute": 4])
            #expect(raised.status == 200)
            #expect(raised["backchannel_requests_per_minute"] as? Int == 4)
            for _ in 0..<4 { _ = try await server.startApproval(client, user: "alice") }
            let refused = try await server.bcAuthorize(client, Self.request)
            #expect(refused.status == 429)
            #expect(refused.errorDescription?.hasPrefix("the client may send 4 authentication requests") == true)

            #expect(try await server.admin("PATCH", path, json: ["backchannel_requests_per_minute": 0]).status == 200)
            for _ in 0..<6 { _ = try await server.startApproval(client, user: "alice") }

            let reset = try await server.call(
                "PATCH", path, key: server.adminKey, body: Data(#"{"backchannel_requests_per_minute":null}"#.utf8))
            #expect(reset.status == 200)
            #expect(reset["backchannel_requests_per_minute"] == nil)
            #expect(try await server.bcAuthorize(client, Self.request).status == 429)
            let kept = try await server.admin("PATCH", path, json: ["name": "Renamed"])
            #expect(kept["backchannel_requests_per_minute"] == nil)
        }
    }

    @Test("a tenant limit of 0 lets any number through", arguments: Engine.available)
    func tenantZeroDisables(engine: Engine) async throws {
        try await Self.withLimit(engine, perMinute: 0) { server, client, _ in
            for _ in 0..<12 { _ = try await server.startApproval(client, user: "alice") }
        }
    }

    @Test("limits out of range are refused, naming the field", arguments: Engine.available)
    func limitsOutOfRange(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            for value in [-1, 1_000_001] {
                let answer = try await server.admin(
                    "PATCH", "/admin/v1/tenants/default/clients/\(client.id)", json: ["backchannel_requests_per_minute": value])
                #expect(answer.status == 400)
                #expect(answer.errorDescription?.contains("backchannel_requests_per_minute") == true)
                let policy = try await server.admin(
                    "PUT", "/admin/v1/tenants/default/authentication-policy", json: ["client_requests_per_minute": value])
                #expect(policy.status == 400)
                #expect(policy.errorDescription?.contains("client_requests_per_minute") == true)
            }
            let defaults = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            #expect(defaults["client_requests_per_minute"] as? Int == 600)
        }
    }

    @Test("two servers on one PostgreSQL database share a client's count",
          .enabled(if: Engine.available.contains(.postgres)))
    func nodesShareTheCount() async throws {
        try await Self.withLimit(.postgres, perMinute: 4) { nodeA, client, _ in
            var configuration = nodeA.configuration
            configuration.port = 0
            configuration.publicURL = nil
            let running = try await CountersignServer.make(configuration: configuration, logger: testLogger).start()
            let nodeB = TestServer(running: running, scratch: nodeA.scratch, clock: nodeA.clock, adminKey: nodeA.adminKey)
            do {
                for node in [nodeA, nodeB, nodeA, nodeB] { _ = try await node.startApproval(client, user: "alice") }
                #expect(try await nodeA.bcAuthorize(client, Self.request).status == 429)
                #expect(try await nodeB.bcAuthorize(client, Self.request).status == 429)
            } catch {
                try? await running.stop()
                throw error
            }
            try await running.stop()
        }
    }
}

/// The arithmetic of the sliding minute, without a server.
@Suite("Sliding minute")
struct SlidingMinuteTests {
    static func minute(at second: Double) -> SlidingMinute {
        SlidingMinute(at: Date(timeIntervalSince1970: 1_772_436_000 + second))
    }

    @Test("the minute starts on a whole minute of the clock")
    func windows() {
        let minute = Self.minute(at: 75.5)
        #expect(minute.elapsed == 15_500)
        #expect(minute.currentStart == Date(timeIntervalSince1970: 1_772_436_060))
        #expect(minute.previousStart == Date(timeIntervalSince1970: 1_772_436_000))
    }

    @Test("the current minute holds the limit less the previous minute's weighted share",
          arguments: [(0.0, 0, 10), (0.0, 4, 6), (30.0, 4, 8), (45.0, 10, 7), (59.999, 10, 9), (15.0, 20, -5)] as [(Double, Int64, Int64)])
    func capacity(second: Double, previous: Int64, expected: Int64) {
        #expect(Self.minute(at: second).capacity(limit: 10, previous: previous) == expected)
    }

    @Test("Retry-After is the time until one more request fits",
          arguments: [(0.0, 0, 10, 66), (30.0, 0, 10, 36), (0.0, 10, 0, 6), (30.0, 20, 0, 3), (59.5, 0, 3, 1)]
              as [(Double, Int64, Int64, Int)])
    func retryAfter(second: Double, previous: Int64, current: Int64, expected: Int) {
        #expect(Self.minute(at: second).retryAfter(limit: 10, previous: previous, current: current) == expected)
    }
}

extension TestServer {
    /// The approval requests stored, whatever their state.
    func storedApprovals() async throws -> Int64 {
        try #require(try await database.run("SELECT COUNT(*) AS n FROM approval_transactions").first).int("n")
    }
}
