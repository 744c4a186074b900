import ArgumentParser
import CountersignCommandLine
import CountersignCore
import CountersignKit
import CountersignServer
import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `countersign-bench`: the approval loop (the default), the device-call paths, the costs of
/// push, factors, SQL, passkeys and sealing, the RADIUS server, and the directory sync. An executable apart from
/// `countersign`, so that the binary operators run does not carry them.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "countersign-bench",
        abstract: "Benchmark the approval loop and device calls (use a release build).",
        subcommands: [LoopBench.self, SoakBench.self, DeviceCallBench.self, PushBench.self, FactorBench.self, SQLBench.self, PasskeyBench.self, SealingBench.self, RADIUSBench.self, DirectoryBench.self, RecoveryBench.self], defaultSubcommand: LoopBench.self)

    /// Only errors reach the terminal: the bench prints its own figures.
    static func quietLogging() {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .error
            return handler
        }
    }
}

/// Measures two device paths end to end, over HTTP on loopback, with the real SDK: enrolling a
/// device, and device-signed calls (`GET /device/v1/self`). The server runs in this process on
/// a scratch data directory (SQLite unless --database-url is given).
struct DeviceCallBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device-calls",
        abstract: "Benchmark enrollment and device-signed requests against an in-process server.")

    @Option(help: "Devices to enroll.") var devices = 20
    @Option(help: "Signed requests to send in all.") var requests = 4000
    @Option(help: "Requests in flight at once.") var concurrency = 16
    @Option(name: .customLong("database-url"), help: "Run on this PostgreSQL database instead of SQLite.") var databaseURL: String?

    func validate() throws {
        guard devices >= 1, requests >= 1, concurrency >= 1 else {
            throw ValidationError("--devices, --requests and --concurrency must each be at least 1")
        }
    }

    func run() async throws {
        Bench.quietLogging()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let target = try await BenchTarget.start(server: nil, adminKey: nil, databaseURL: databaseURL, scratch: scratch)
        let adminKey = target.adminKey
        let base = target.base
        print("Countersign bench: \(target.description), \(ProcessInfo.processInfo.activeProcessorCount) cores")

        let admin = AdminAPIClient(base: base, key: adminKey)
        let user = try await admin.send("POST", "/admin/v1/tenants/default/users", body: ["username": "bench"]) as? [String: Any]
        let userID = user?["id"] as? String ?? ""
        let authenticator = CountersignAuthenticator(keyStore: FileKeyStore(root: scratch.appendingPathComponent("device")))
        var enrollments: [Enrollment] = []
        var enrollTimes: [Double] = []
        for index in 0..<devices {
            let ticket = try await admin.send("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
                as? [String: Any]
            let uri = ticket?["enrollment_uri"] as? String ?? ""
            let start = ContinuousClock.now
            enrollments.append(try await authenticator.enroll(uri: uri, deviceName: "bench \(index)", platform: .linux))
            enrollTimes.append((ContinuousClock.now - start).milliseconds)
        }
        report("enroll (SDK: keys + request + receipt check; server: verify + transaction)", enrollTimes, total: nil)

        // The floor: the same HTTP client and server answering an unauthenticated GET /healthz,
        // which touches neither the database nor any key.
        var floor: [Double] = []
        let health = URLRequest(url: URL(string: base + "/healthz")!)
        for _ in 0..<min(requests, 2000) {
            let begin = ContinuousClock.now
            _ = try await URLSession.shared.data(for: health)
            floor.append((ContinuousClock.now - begin).milliseconds)
        }
        report("floor: GET /healthz, sequential (HTTP client + server, no database, no crypto)", floor, total: floor.reduce(0, +))

        // Warm-up, then the measured run.
        for enrollment in enrollments { _ = try await authenticator.deviceStatus(enrollment.id) }
        let serverBefore = try await ServerCounters.read(base, method: "GET")
        let perTask = max(1, requests / concurrency)
        let enrolled = enrollments
        let start = ContinuousClock.now
        let times = try await withThrowingTaskGroup(of: [Double].self) { group in
            for task in 0..<concurrency {
                group.addTask {
                    var times: [Double] = []
                    for index in 0..<perTask {
                        let enrollment = enrolled[(task * perTask + index) % enrolled.count]
                        let begin = ContinuousClock.now
                        _ = try await authenticator.deviceStatus(enrollment.id)
                        times.append((ContinuousClock.now - begin).milliseconds)
                    }
                    return times
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }
        }
        report("signed GET /device/v1/self at concurrency \(concurrency)", times, total: (ContinuousClock.now - start).milliseconds)
        let serverAfter = try await ServerCounters.read(base, method: "GET")
        let served = serverAfter.requests - serverBefore.requests
        if served > 0 {
            print("  of which inside the server (request received → response written, from /metrics): mean \(format((serverAfter.seconds - serverBefore.seconds) / served * 1000)) ms")
        }
        try await target.stop()
    }

    private func report(_ name: String, _ times: [Double], total: Double?) {
        let sorted = times.sorted()
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        var line = "\(name): n=\(sorted.count) p50=\(format(percentile(0.5))) ms p95=\(format(percentile(0.95))) ms p99=\(format(percentile(0.99))) ms max=\(format(sorted.last ?? 0)) ms"
        if let total { line += " throughput=\(Int(Double(sorted.count) / (total / 1000))) req/s" }
        print(line)
    }
}

extension Duration {
    var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}
