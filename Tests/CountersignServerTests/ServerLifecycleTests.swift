import Foundation
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
        #expect(try await second.services.tenantService.signingKey(for: second.defaultTenant).publicKey.x963Representation
            == (try first.defaultTenant.signingKey.signingKey().x963Representation))
        await second.services.database.close()

        let wrongKey = MasterKey.generate()
        await #expect(throws: MasterKeyError.mismatch(wrongKey.identifier)) {
            _ = try await CountersignServer.make(
                configuration: TestServer.configuration(scratch, clock: clock, masterKey: wrongKey.encodedForTests),
                logger: testLogger)
        }
    }

    @Test("requests in flight finish before a graceful stop returns", arguments: Engine.available)
    func gracefulStopFinishesRequests(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let answers = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await server.admin("POST", "/admin/v1/tenants/default/users", json: ["username": "u\(index)"]).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0 == 201 })
        }
    }
}
