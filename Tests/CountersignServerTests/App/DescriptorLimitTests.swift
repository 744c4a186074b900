import Foundation
import Testing
@testable import CountersignServer

/// The open file limit bounds how many connections a server can hold: at start the soft
/// limit is raised to the hard one, and the connection cap is fitted under it with
/// descriptors to spare for the database.
@Suite("Descriptor limit")
struct DescriptorLimitTests {
    @Test("the cap keeps the reserve and the database pool free, and never exceeds what was asked")
    func capFitsUnderTheDescriptorLimit() {
        var limits = ConnectionLimits()
        #expect(limits.effectiveMaximumConnections(descriptorLimit: 1024, databasePoolSize: 0) == 896)
        #expect(limits.effectiveMaximumConnections(descriptorLimit: 1024, databasePoolSize: 20) == 876)
        #expect(limits.effectiveMaximumConnections(descriptorLimit: 1_048_576, databasePoolSize: 20)
            == ConnectionLimits.defaultMaximumConnections)
        limits.maximumConnections = 500
        #expect(limits.effectiveMaximumConnections(descriptorLimit: 65_536, databasePoolSize: 20) == 500)
        #expect(limits.effectiveMaximumConnections(descriptorLimit: 100, databasePoolSize: 20)
            == ConnectionLimits.connectionCaps.lowerBound)
    }

    @Test("serve raises a low soft limit to the hard limit, logs both, and lowers a cap that does not fit",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func serveRaisesTheSoftLimit() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-nofile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let log = scratch.appendingPathComponent("serve.err")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/bin/sh")
        // A hard limit of 600 under which the soft one starts at 256: the server may raise it
        // to 600, which leaves room for 472 connections, not the 1,000 asked for.
        server.arguments = [
            "-c", "ulimit -Sn 256 && ulimit -Hn 600 && exec \"$0\" serve --port 0 --data-dir \"$1\" --max-connections 1000",
            try CommandLineTests.requireExecutable().path, scratch.appendingPathComponent("data").path,
        ]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = try FileHandle(forWritingTo: log)
        try server.run()
        defer { if server.isRunning { server.terminate() } }
        var text = ""
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        while !text.contains("public URL"), server.isRunning, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            text = try String(contentsOf: log, encoding: .utf8)
        }
        #expect(text.contains("open file limit 600 (raised from 256); at most 472 HTTP connections"), "\(text)")
        #expect(text.contains("the connection cap is lowered to 472"), "\(text)")
    }

    @Test("an out-of-range connection, database or memory option stops serve with a message naming it",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"),
          arguments: [
              (["--idle-timeout", "0"], "idle timeout must be a whole number of seconds from 1 to 3600"),
              (["--header-timeout", "3601"], "header timeout must be a whole number of seconds from 1 to 3600"),
              (["--body-timeout", "0"], "body timeout must be a whole number of seconds from 1 to 3600"),
              (["--max-connections", "15"], "max connections must be a whole number of connections from 16 to 1000000"),
              (["--database-wait", "61"], "database wait must be a whole number of seconds from 1 to 60"),
              (["--memory-return-interval", "3601"], "memory return interval must be a whole number of seconds from 0 to 3600"),
          ])
    func outOfRangeOptionIsRefused(arguments: [String], message: String) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-options-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try await CommandLineTests.run(["serve", "--port", "0", "--data-dir", scratch.path] + arguments, environment: [:])
        #expect(run.status != 0)
        #expect(run.output.contains(message), "\(run.output)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path), "nothing is created for a refused start")
    }
}
