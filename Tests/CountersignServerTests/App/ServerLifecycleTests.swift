import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import CountersignServer

@Suite("Server lifecycle")
struct ServerLifecycleTests {
    @Test("health, readiness and metrics answer", arguments: Engine.available)
    func healthEndpoints(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            #expect(try await server.call("GET", "/healthz").status == 200)
            let ready = try await server.call("GET", "/readyz")
            #expect(ready.status == 200)
            #expect(ready["status"] as? String == "ready")
            _ = try await server.call("GET", "/admin/v1/tenants")
            let metrics = try await server.call("GET", "/metrics")
            #expect(metrics.status == 200)
            let text = String(decoding: metrics.data, as: UTF8.self)
            #expect(text.contains("countersign_http_requests_total{method=\"GET\",status=\"401\"}"))
            #expect(text.contains("countersign_http_request_duration_seconds_bucket"))
            #if os(Linux)
            // The heap and stacks are part of the resident memory, and far from all of it here.
            func gauge(_ name: String) -> Double? {
                text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
            }
            let resident = try #require(gauge("countersign_process_resident_memory_bytes"))
            let anonymous = try #require(gauge("countersign_process_anonymous_memory_bytes"))
            #expect(anonymous > 1_048_576)
            #expect(anonymous < resident)
            #endif
            // SQLite's page cache holds the pages read so far (the migrations, the tenants), a
            // part of the heap; PostgreSQL keeps its cache in its own server.
            let pageCache = text.split(separator: "\n").first { $0.hasPrefix("countersign_sqlite_page_cache_bytes ") }
                .flatMap { Double($0.split(separator: " ").last ?? "") }
            switch engine {
            case .sqlite:
                let bytes = try #require(pageCache)
                #expect(bytes > 4096 && bytes < 64 * 1_048_576)
            case .postgres:
                #expect(pageCache == nil)
            }
            // PostgreSQL's named statements: some kept, none sent unnamed on a fresh server.
            let kept = text.split(separator: "\n").first { $0.hasPrefix("countersign_postgres_kept_statements ") }
                .flatMap { Double($0.split(separator: " ").last ?? "") }
            let unnamed = text.split(separator: "\n").first { $0.hasPrefix("countersign_postgres_unnamed_statements_total ") }
                .flatMap { Double($0.split(separator: " ").last ?? "") }
            switch engine {
            case .sqlite:
                #expect(kept == nil && unnamed == nil)
            case .postgres:
                #expect(try #require(kept) > 0)
                #expect(unnamed == 0)
            }
        }
    }

    @Test("a restart keeps everything and creates no second bootstrap key; a wrong master key is refused",
          arguments: Engine.available)
    func restartAndWrongMasterKey(engine: Engine) async throws {
        let scratch = try await ScratchDatabase.make(engine)
        defer { Task { await scratch.destroy() } }
        let clock = TestClock()
        let masterKey = TestServer.randomMasterKey()
        let first = try await CountersignServer.make(
            configuration: TestServer.configuration(scratch, clock: clock, masterKey: masterKey), logger: testLogger)
        #expect(first.bootstrapAdminKey != nil)
        let running = try await first.start()
        try await running.stop()

        let second = try await CountersignServer.make(
            configuration: TestServer.configuration(scratch, clock: clock, masterKey: masterKey), logger: testLogger)
        #expect(second.bootstrapAdminKey == nil)
        #expect(second.defaultTenant.id == first.defaultTenant.id)
        #expect(second.defaultTenant.signingKey == first.defaultTenant.signingKey)
        #expect(try await second.tenants.signingKey(for: second.defaultTenant).publicKey.x963Representation
            == (try first.defaultTenant.signingKey.signingKey().x963Representation))
        await second.database.close()

        let wrongKey = MasterKey.generate()
        await #expect(throws: MasterKeyError.mismatch(wrongKey.identifier)) {
            _ = try await CountersignServer.make(
                configuration: TestServer.configuration(scratch, clock: clock, masterKey: wrongKey.base64),
                logger: testLogger)
        }
    }

    @Test("a request in flight when shutdown begins still completes, and what it wrote is kept",
          arguments: Engine.available)
    func gracefulStopFinishesRequestsInFlight(engine: Engine) async throws {
        let scratch = try await ScratchDatabase.make(engine)
        defer { Task { await scratch.destroy() } }
        let clock = TestClock()
        let masterKey = TestServer.randomMasterKey()
        let server = try await CountersignServer.make(
            configuration: TestServer.configuration(scratch, clock: clock, masterKey: masterKey), logger: testLogger)
        let adminKey = try #require(server.bootstrapAdminKey)
        let running = try await server.start()

        // Send the head and half the body, then begin shutting down, then send the rest.
        let body = Array(#"{"username":"in-flight"}"#.utf8)
        let connection = try RawHTTPConnection(port: running.port)
        try connection.send(Array("""
            POST /admin/v1/tenants/default/users HTTP/1.1\r
            Host: 127.0.0.1\r
            Authorization: Bearer \(adminKey)\r
            Content-Type: application/json\r
            Content-Length: \(body.count)\r
            \r

            """.utf8) + body.prefix(10))
        // Begin shutting down only once the server is answering that request (the metrics request
        // that asks counts itself too), and send the rest only once shutdown is under way: new
        // connections are refused.
        try await Self.waitUntil("the server is answering the request") {
            try await Self.requestsInFlight(port: running.port) >= 2
        }
        let stopping = Task { try await running.stop() }
        try await Self.waitUntil("the server refuses new connections") {
            (try? RawHTTPConnection(port: running.port)) == nil
        }
        try connection.send(Array(body.dropFirst(10)))
        let response = try await connection.response()
        try await stopping.value
        #expect(response.hasPrefix("HTTP/1.1 201"), "\(response.prefix(200))")

        // New connections are refused once stopped; the user survives a restart.
        #expect(throws: (any Error).self) { try RawHTTPConnection(port: running.port) }
        let restarted = try await CountersignServer.make(
            configuration: TestServer.configuration(scratch, clock: clock, masterKey: masterKey), logger: testLogger)
        let user = try await SQLUserRepository().find(
            username: "in-flight", tenantID: restarted.defaultTenant.id, on: restarted.database)
        #expect(user != nil)
        await restarted.database.close()
    }

    static func requestsInFlight(port: Int) async throws -> Double {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("countersign_http_requests_in_flight ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    static func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
        for _ in 0..<200 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("timed out waiting until \(what)")
    }
}
