import CountersignServer
import Foundation
import NIOCore
import Testing

/// A start that fails before the server listens leaves no admin key behind that nobody saw,
/// and says why in words.
@Suite("A start that cannot listen")
struct ServerStartFailureTests {
    @Test("a start on a port in use withdraws its bootstrap key; the next start makes a new one",
          arguments: Engine.available)
    func portInUseWithdrawsTheBootstrapKey(engine: Engine) async throws {
        let scratch = try await ScratchDatabase.make(engine)
        defer { Task { await scratch.destroy() } }
        let holder = try PortHolder()
        let clock = TestClock()
        let masterKey = TestServer.randomMasterKey()
        var configuration = TestServer.configuration(scratch, clock: clock, masterKey: masterKey)
        configuration.port = holder.port
        let failed = try await CountersignServer.make(configuration: configuration, logger: testLogger)
        let withdrawn = try #require(failed.bootstrapAdminKey)
        await #expect { try await failed.run(signals: []) } throws: { error in
            (error as? IOError)?.errnoCode == EADDRINUSE
        }

        configuration.port = 0
        let second = try await CountersignServer.make(configuration: configuration, logger: testLogger)
        let fresh = try #require(second.bootstrapAdminKey, "a new bootstrap key, since the first was never shown")
        #expect(fresh != withdrawn)
        #expect(second.defaultTenant.id == failed.defaultTenant.id)
        let running = try await second.start()
        defer { Task { try? await running.stop() } }
        let test = TestServer(running: running, scratch: scratch, clock: clock, adminKey: fresh)
        #expect(try await test.call("GET", "/admin/v1/admin-keys", key: withdrawn).status == 401)
        let audit = try await test.admin("GET", "/admin/v1/audit")
        #expect(audit.status == 200)
        let text = String(decoding: audit.data, as: UTF8.self)
        #expect(text.contains("admin_key.withdrawn"))
        #expect(text.contains(String(withdrawn.prefix { $0 != "." })))

        let third = try await CountersignServer.make(configuration: configuration, logger: testLogger)
        #expect(third.bootstrapAdminKey == nil, "a start after one that listened makes no key")
        await third.database.close()
    }

    @Test("countersign serve on a port in use says so and prints no key; the next start prints one",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func serveOnAPortInUse() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-port-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let dataDirectory = scratch.appendingPathComponent("data").path
        let holder = try PortHolder()
        let refused = try await CommandLineTests.run(
            ["serve", "--port", "\(holder.port)", "--data-dir", dataDirectory], environment: [:])
        #expect(refused.status == 1)
        #expect(refused.output.contains("Countersign cannot start: 127.0.0.1:\(holder.port) is already in use"), "\(refused.output)")
        #expect(!refused.output.contains("COUNTERSIGN_ADMIN_KEY"), "no key of a server that did not start")
        #expect(!refused.output.contains("bind("), "no raw system call in the message")

        let (server, _, stdout, _) = try await CommandLineTests.serve(dataDirectory: dataDirectory, in: scratch, name: "next")
        defer { if server.isRunning { server.terminate() } }
        #expect(try CommandLineTests.adminKey(printedTo: stdout).hasPrefix("key_"))
        server.terminate()
        server.waitUntilExit()
    }
}
