import ArgumentParser
import CountersignCommandLine
import CountersignCore
import CountersignKit
import CountersignServer
import Foundation
import Logging
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Complete approval loops, as production runs them: a relying party calls `bc-authorize`, the
/// user's device (CountersignKit, holding its live stream) opens the sealed details, signs and
/// sends its approval, and the relying party exchanges `auth_req_id` for tokens. Every user has
/// one device and one loop in flight at a time; `--concurrency` users are busy at once.
struct LoopBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loop",
        abstract: "Benchmark complete approval loops: bc-authorize → device approves → token.")

    @Option(help: "Complete loops to run (after a warm-up of one loop per user).") var loops = 2000
    @Option(help: "Loops in flight at once, each for its own user and device.") var concurrency = 64
    @Option(help: "Requests to leave pending at the end, then report the server's resident memory.") var pending = 0
    @Option(help: "A running server's URL; default: start one in this process on a scratch directory.") var server: String?
    @Option(name: .customLong("admin-key"), help: "Admin key for --server (COUNTERSIGN_ADMIN_KEY).") var adminKey: String?
    @Option(name: .customLong("node"),
            help: "With --server: another node of the same cluster (repeatable). Users are spread over the nodes, and each loop's relying party calls the node after its device's.")
    var nodes: [String] = []
    @Option(name: .customLong("database-url"), help: "In-process server on this PostgreSQL database instead of SQLite.")
    var databaseURL: String?
    @Option(name: .customLong("http-client"),
            help: "The devices' and relying party's HTTP client: nio (AsyncHTTPClient) or urlsession (the SDK's default).")
    var httpClient: HTTPClientChoice = .nio

    enum HTTPClientChoice: String, ExpressibleByArgument, Sendable {
        case nio, urlsession
    }

    func validate() throws {
        guard loops >= 1, concurrency >= 1, pending >= 0 else {
            throw ValidationError("--loops and --concurrency must be at least 1, --pending at least 0")
        }
        if server != nil, databaseURL != nil { throw ValidationError("--database-url applies to the in-process server only") }
        if server == nil, !nodes.isEmpty { throw ValidationError("--node needs --server: the nodes are servers already running") }
    }

    func run() async throws {
        Bench.quietLogging()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let target = try await BenchTarget.start(
            server: server, adminKey: setting(adminKey, "COUNTERSIGN_ADMIN_KEY"), databaseURL: databaseURL, scratch: scratch)
        print("Countersign loop bench: \(target.description), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(httpClient.rawValue) HTTP client")

        let nio = httpClient == .nio ? NIOTransport(connections: 2 * concurrency + 16) : nil
        let transport: any HTTPTransport = nio ?? URLSessionTransport()
        let setupStart = ContinuousClock.now
        let admin = AdminAPIClient(base: target.base, key: target.adminKey)
        let policy = try await BenchPolicy.lift(admin)
        let bases = [target.base] + nodes.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        let fixture = try await LoopFixture.make(target: target, users: concurrency, transport: transport, scratch: scratch,
                                                 nodes: bases)
        print("setup: \(concurrency) users with one enrolled device each in \(format((ContinuousClock.now - setupStart).milliseconds / 1000)) s" +
              (bases.count > 1 ? ", spread over \(bases.count) nodes" : ""))

        let devices = try await fixture.startDevices()
        // Warm-up: one loop per user, so every connection and every stream is open.
        _ = try await fixture.run(loops: concurrency, concurrency: concurrency, devices: devices)

        let before = try await ServerCounters.read(all: bases)
        let cpuBefore = ServerMetrics.cpuSeconds()
        let machineBefore = MachineCPU.busySeconds()
        let start = ContinuousClock.now
        let times = try await fixture.run(loops: loops, concurrency: concurrency, devices: devices)
        let elapsed = (ContinuousClock.now - start).milliseconds
        let cpu = ServerMetrics.cpuSeconds() - cpuBefore
        let machine = MachineCPU.busySeconds().flatMap { end in machineBefore.map { end - $0 } }
        let after = try await ServerCounters.read(all: bases)
        report(times, elapsed: elapsed)
        reportCPU(process: cpu, server: after.cpuSeconds.flatMap { end in before.cpuSeconds.map { end - $0 } },
                  loops: Double(times.count), inProcess: server == nil)
        if let machine {
            // Everything on this host: with a local PostgreSQL, its backends are the rest.
            print("  machine: \(format(machine / Double(times.count) * 1000)) ms of CPU per loop on all cores of this host, " +
                  "\(format(machine)) s busy in \(format(elapsed / 1000)) s")
        }
        let requests = after.requests - before.requests
        if requests > 0 {
            print("  server: \(Int(requests)) HTTP requests (\(format(requests / Double(times.count))) per loop), mean \(format((after.seconds - before.seconds) / requests * 1000)) ms inside the server per request")
        }
        await devices.stop()
        if devices.dismissedCount > 0 {
            print("  devices: \(devices.dismissedCount) request(s) shown again after their answer, dismissed")
        }

        if pending > 0 {
            let pendingStart = ContinuousClock.now
            try await fixture.leavePending(pending)
            let withPending = try await ServerCounters.read(target.base)
            print("pending: \(pending) undecided requests created in \(format((ContinuousClock.now - pendingStart).milliseconds / 1000)) s; server resident memory \(mebibytes(after.residentBytes)) before, \(mebibytes(withPending.residentBytes)) with them pending (anonymous \(mebibytes(after.anonymousBytes)), \(mebibytes(withPending.anonymousBytes)))")
        }
        try await policy.restore(admin)
        try await target.stop()
        try await nio?.shutdown()
    }

    private func report(_ times: [Double], elapsed: Double) {
        let sorted = times.sorted()
        func percentile(_ p: Double) -> String { format(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) }
        print("loops: n=\(sorted.count) concurrency=\(concurrency) throughput=\(format(Double(sorted.count) / (elapsed / 1000))) loops/s p50=\(percentile(0.5)) ms p90=\(percentile(0.9)) ms p99=\(percentile(0.99)) ms max=\(format(sorted.last ?? 0)) ms")
    }

    /// CPU time per loop: this process's (getrusage), and with `--server` the server's from its
    /// `/metrics`. It holds from machine to machine where loops per second do not.
    private func reportCPU(process: Double, server: Double?, loops: Double, inProcess: Bool) {
        func perLoop(_ seconds: Double) -> String { "\(format(seconds / loops * 1000)) ms" }
        if inProcess {
            print("  cpu: \(perLoop(process)) per loop for the whole process (server, devices and relying party), \(format(process)) s in all")
        } else {
            print("  cpu: \(server.map(perLoop) ?? "unknown") per loop in the server, \(perLoop(process)) in this load generator")
        }
    }

    private func mebibytes(_ bytes: Double?) -> String {
        bytes.map { "\(format($0 / 1_048_576)) MiB" } ?? "unknown (no /proc on the server's host)"
    }
}

/// The default tenant's authentication policy while a bench runs. A loop per user many times a
/// minute, hundreds a second from one client, is what the per-user and per-client limits exist
/// to refuse; the bench lifts the per-user limit and raises the per-client one to its highest
/// value, so that each request is still counted as in production but none is refused, and puts
/// the tenant's policy back afterwards.
struct BenchPolicy {
    static let path = "/admin/v1/tenants/default/authentication-policy"
    /// The policy as it was before the bench.
    let saved: [String: Any]

    /// `also`: further members to set for the bench (`totp`, say).
    static func lift(_ admin: AdminAPIClient, also: [String: Any] = [:]) async throws -> BenchPolicy {
        let policy = try await admin.send("GET", path) as? [String: Any] ?? [:]
        var lifted = policy.merging(also) { $1 }
        lifted["user_requests_per_minute"] = 0
        lifted["client_requests_per_minute"] = 1_000_000
        _ = try await admin.send("PUT", path, body: lifted)
        return BenchPolicy(saved: policy)
    }

    func restore(_ admin: AdminAPIClient) async throws {
        _ = try await admin.send("PUT", Self.path, body: saved)
    }
}

/// CPU time all cores of this host have spent busy (not idle or waiting for I/O), from
/// `/proc/stat`; nil where there is no such file.
enum MachineCPU {
    static func busySeconds() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        // user nice system idle iowait irq softirq steal …, in USER_HZ (100 a second on Linux).
        let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard fields.count >= 8 else { return nil }
        let busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]
        return busy / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// The server under test: started in this process, or one already running.
struct BenchTarget: Sendable {
    let base: String
    let adminKey: String
    let description: String
    private let running: CountersignServer.Running?

    /// `configure` adjusts the in-process server's configuration (a RADIUS port, say).
    static func start(
        server: String?, adminKey: String?, databaseURL: String?, scratch: URL,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> BenchTarget {
        if let server {
            guard let adminKey else { throw ValidationError("--server needs an admin key (COUNTERSIGN_ADMIN_KEY or --admin-key)") }
            return BenchTarget(base: server.hasSuffix("/") ? String(server.dropLast()) : server, adminKey: adminKey,
                               description: "server at \(server)", running: nil)
        }
        var configuration = ServerConfiguration(dataDirectory: scratch.appendingPathComponent("data"))
        configuration.port = 0
        configuration.databaseURL = databaseURL
        configuration.masterKey = MasterKey.generate().base64
        configure(&configuration)
        let made = try await CountersignServer.make(configuration: configuration, logger: Logger(label: "bench"))
        let running = try await made.start()
        return BenchTarget(base: running.baseURL, adminKey: made.bootstrapAdminKey ?? "",
                           description: "\(databaseURL == nil ? "SQLite" : "PostgreSQL"), server in process on \(running.baseURL)",
                           running: running)
    }

    func stop() async throws {
        try await running?.stop()
    }

    /// The UDP port the in-process server answers RADIUS on, once bound; nil without one.
    func radiusPort() async -> Int? {
        await running?.server.radiusPort()
    }
}

/// Counters read from the server's `/metrics`.
struct ServerCounters: Sendable {
    var requests = 0.0
    var seconds = 0.0
    var residentBytes: Double?
    var anonymousBytes: Double?
    var cpuSeconds: Double?
    var pageCacheBytes: Double?

    /// The sums over several nodes (resident memory: the sum of theirs).
    static func read(all bases: [String]) async throws -> ServerCounters {
        var total = ServerCounters()
        for base in bases {
            let counters = try await read(base)
            total.requests += counters.requests
            total.seconds += counters.seconds
            if let resident = counters.residentBytes { total.residentBytes = (total.residentBytes ?? 0) + resident }
            if let anonymous = counters.anonymousBytes { total.anonymousBytes = (total.anonymousBytes ?? 0) + anonymous }
            if let cpu = counters.cpuSeconds { total.cpuSeconds = (total.cpuSeconds ?? 0) + cpu }
        }
        return total
    }

    /// `method`: count only requests with this method (`GET`); nil: all.
    static func read(_ base: String, method: String? = nil) async throws -> ServerCounters {
        let (data, _) = try await URLSession.shared.data(from: URL(string: base + "/metrics")!)
        var counters = ServerCounters()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            if let method, line.hasPrefix("countersign_http_request_duration_seconds"),
               !line.contains("method=\"\(method)\"") { continue }
            let value = Double(line.split(separator: " ").last ?? "") ?? 0
            if line.hasPrefix("countersign_http_request_duration_seconds_sum") { counters.seconds += value }
            if line.hasPrefix("countersign_http_request_duration_seconds_count") { counters.requests += value }
            if line.hasPrefix("countersign_process_resident_memory_bytes") { counters.residentBytes = value }
            if line.hasPrefix("countersign_process_anonymous_memory_bytes") { counters.anonymousBytes = value }
            if line.hasPrefix("countersign_process_cpu_seconds") { counters.cpuSeconds = value }
            if line.hasPrefix("countersign_sqlite_page_cache_bytes") { counters.pageCacheBytes = value }
        }
        return counters
    }
}

/// The bench's users, their devices and the relying party.
struct LoopFixture: Sendable {
    let target: BenchTarget
    /// The relying party on each node, in the order of `nodes`.
    let parties: [RelyingParty]
    /// The relying party on the first node.
    var client: RelyingParty { parties[0] }
    /// Each user's device: its own authenticator, as on a phone.
    let users: [(username: String, enrollment: Enrollment, authenticator: CountersignAuthenticator)]

    /// User `i` is created and enrolled through node `i % nodes.count` (so its device talks to
    /// that node); nodes default to the target alone.
    static func make(target: BenchTarget, users count: Int, transport: any HTTPTransport, scratch: URL,
                     nodes: [String]? = nil) async throws -> LoopFixture {
        let nodes = nodes ?? [target.base]
        let admin = AdminAPIClient(base: target.base, key: target.adminKey)
        let run = UUID().uuidString.prefix(8).lowercased()
        let created = try await admin.send(
            "POST", "/admin/v1/tenants/default/clients", body: ["name": "Bench relying party \(run)", "scopes": ["openid"]])
        guard let object = created as? [String: Any], let client = object["client"] as? [String: Any],
              let clientID = client["client_id"] as? String, let secret = object["client_secret"] as? String else {
            throw ValidationError("the server did not create the bench client")
        }
        var users: [(String, Enrollment, CountersignAuthenticator)] = []
        for index in 0..<count {
            let username = "bench-\(run)-\(index)"
            let admin = AdminAPIClient(base: nodes[index % nodes.count], key: target.adminKey)
            let user = try await admin.send("POST", "/admin/v1/tenants/default/users", body: ["username": username])
            guard let userID = (user as? [String: Any])?["id"] as? String else { throw ValidationError("no user id") }
            let ticket = try await admin.send("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
            guard let uri = (ticket as? [String: Any])?["enrollment_uri"] as? String else { throw ValidationError("no ticket") }
            let authenticator = CountersignAuthenticator(
                keyStore: FileKeyStore(root: scratch.appendingPathComponent("devices/\(index)")), transport: transport)
            let enrollment = try await authenticator.enroll(uri: uri, deviceName: "bench \(index)", platform: .linux)
            users.append((username, enrollment, authenticator))
        }
        return LoopFixture(
            target: target,
            parties: nodes.map { RelyingParty(base: $0, clientID: clientID, secret: secret, transport: transport) },
            users: users)
    }

    /// The relying party for a user's loops: on the node after the one its device uses, so that
    /// with several nodes every request crosses from one node to another.
    func party(for user: Int) -> RelyingParty {
        parties[(user + 1) % parties.count]
    }

    /// Every device holds its live stream and approves what arrives.
    func startDevices() async throws -> BenchDevices {
        let devices = BenchDevices(count: users.count)
        for (index, user) in users.enumerated() {
            devices.start(index) { approved in
                // The server ends a live stream after 30 minutes; the device opens it again, as
                // an app does, and is sent what arrived meanwhile first.
                while !Task.isCancelled {
                    for try await event in user.authenticator.liveRequests(user.enrollment.id) {
                        guard case .request(let request) = event else { continue }
                        let details = try await user.authenticator.details(for: request)
                        do {
                            _ = try await user.authenticator.approve(details)
                        } catch CountersignError.alreadyAnswered {
                            // As an app does, the device dismisses a request answered meanwhile
                            // (one shown again on a stream opened after its answer); counted, and
                            // reported, since in this bench only this device answers.
                            devices.dismissed()
                            continue
                        }
                        approved()
                    }
                }
            }
        }
        return devices
    }

    /// Runs `loops` loops, `concurrency` at once (worker `i` always for user `i`), and returns
    /// each loop's time in milliseconds.
    func run(loops: Int, concurrency: Int, devices: BenchDevices) async throws -> [Double] {
        try await withThrowingTaskGroup(of: [Double].self) { group in
            for worker in 0..<concurrency {
                let share = loops / concurrency + (worker < loops % concurrency ? 1 : 0)
                group.addTask {
                    var times: [Double] = []
                    for _ in 0..<share {
                        let begin = ContinuousClock.now
                        let party = party(for: worker)
                        let authReqID = try await party.authorize(username: users[worker].username)
                        try await devices.waitForApproval(worker)
                        _ = try await party.tokens(authReqID)
                        times.append((ContinuousClock.now - begin).milliseconds)
                    }
                    return times
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }
        }
    }

    /// Creates `count` requests nobody answers (the devices are stopped).
    func leavePending(_ count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<min(count, 16) {
                group.addTask {
                    var index = worker
                    while index < count {
                        _ = try await client.authorize(username: users[index % users.count].username)
                        index += 16
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

/// The simulated devices' tasks, and a signal per device each time it has approved.
final class BenchDevices: Sendable {
    private let approvals: [AsyncStream<Void>]
    private let continuations: [AsyncStream<Void>.Continuation]
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let failure = Mutex<(any Error)?>(nil)
    private let dismissals = Atomic<Int>(0)

    /// Requests the devices were shown after they had answered them, and dismissed.
    var dismissedCount: Int { dismissals.load(ordering: .relaxed) }

    func dismissed() {
        dismissals.add(1, ordering: .relaxed)
    }

    init(count: Int) {
        var streams: [AsyncStream<Void>] = []
        var continuations: [AsyncStream<Void>.Continuation] = []
        for _ in 0..<count {
            let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
            streams.append(stream)
            continuations.append(continuation)
        }
        approvals = streams
        self.continuations = continuations
    }

    func start(_ index: Int, _ body: @escaping @Sendable (_ approved: @escaping @Sendable () -> Void) async throws -> Void) {
        let continuation = continuations[index]
        let task = Task {
            do {
                try await body { continuation.yield() }
            } catch is CancellationError {
            } catch {
                self.failure.withLock { $0 = $0 ?? error }
            }
            continuation.finish()
        }
        tasks.withLock { $0.append(task) }
    }

    func waitForApproval(_ index: Int) async throws {
        for await _ in approvals[index] { return }
        throw failure.withLock { $0 } ?? ValidationError("device \(index) stopped")
    }

    func stop() async {
        let running = tasks.withLock { $0 }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }
}

/// The relying party: `ciba auth`'s client (client_secret_basic, form-encoded CIBA calls).
struct RelyingParty: Sendable {
    let client: RelyingPartyClient

    init(base: String, clientID: String, secret: String, transport: any HTTPTransport) {
        client = RelyingPartyClient(base: base, clientID: clientID, clientSecret: secret, transport: transport)
    }

    func authorize(username: String) async throws -> String {
        let answer = try await client.post("/bc-authorize", ["scope": "openid", "login_hint": username, "binding_message": "Bench"])
        guard let id = answer["auth_req_id"] as? String else { throw ValidationError("bc-authorize: \(answer)") }
        return id
    }

    func tokens(_ authReqID: String) async throws -> [String: Any] {
        while true {
            do {
                return try await client.post(
                    "/token", ["grant_type": RelyingPartyClient.cibaGrantType, "auth_req_id": authReqID])
            } catch let refusal as RelyingPartyClient.Refusal where refusal.code == "authorization_pending" {
                // The device has answered before the first poll, so this is not expected.
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}

func format(_ value: Double) -> String { String(format: "%.2f", value) }
