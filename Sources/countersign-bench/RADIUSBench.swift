import ArgumentParser
import CountersignCommandLine
import CountersignCore
import CountersignKit
import CountersignServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `countersign-bench radius`: the RADIUS server (`countersign serve --radius-port`) under the
/// load of a gateway on the same machine, over UDP on loopback, the server in this process on a
/// scratch data directory (SQLite unless --database-url is given):
///
/// 1. a floor: Status-Server, authenticated and answered with nothing looked up;
/// 2. the passcode path: Access-Requests carrying TOTP codes from the users' devices, each code
///    accepted once (a user's three codes of one step, in order), then the same codes again in
///    new requests, rejected as used;
/// 3. retransmissions: the accepted requests sent again byte for byte from the same sockets,
///    answered from the duplicate cache;
/// 4. the push path: logins approved on devices holding their live streams (CountersignKit),
///    timed from Access-Request sent to Access-Accept received.
struct RADIUSBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "radius",
        abstract: "Benchmark the RADIUS server: passcode requests per second, retransmissions, and push logins approved on devices.")

    @Option(help: "Users with a TOTP device each, shared out among the passcode runs.") var users = 3000
    @Option(name: .customLong("in-flight"),
            help: "Passcode requests in flight at once; repeat for a run each (default: 64, then 256).")
    var inFlight: [Int] = []
    @Option(help: "Push logins to time, after a warm-up of one per device.") var pushes = 1280
    @Option(name: .customLong("push-concurrency"), help: "Push logins in flight at once, each for its own user and device.")
    var pushConcurrency = 64
    @Option(name: .customLong("database-url"), help: "Run on this PostgreSQL database instead of SQLite.") var databaseURL: String?

    /// The TOTP step the server checks codes in (`TOTPVerification.period`).
    static let period = 30
    static let secret = "countersign-bench-radius-shared-secret"
    /// Slots per socket: Identifiers are 8 bits, and fewer keep each thread's queue short.
    static let slotsPerSocket = 128

    var runs: [Int] { inFlight.isEmpty ? [64, 256] : inFlight }

    func validate() throws {
        guard users >= 1, pushes >= 1, pushConcurrency >= 1, runs.allSatisfy({ $0 >= 1 }) else {
            throw ValidationError("--users, --in-flight, --pushes and --push-concurrency must each be at least 1")
        }
        guard users / runs.count >= runs.max() ?? 1 else {
            throw ValidationError("each passcode run needs at least as many users as requests in flight: --users \(runs.count * (runs.max() ?? 1)) or more")
        }
    }

    func run() async throws {
        Bench.quietLogging()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let target = try await BenchTarget.start(server: nil, adminKey: nil, databaseURL: databaseURL, scratch: scratch) {
            $0.radiusPort = 0
        }
        guard let port = await target.radiusPort() else { throw ValidationError("the server did not bind a RADIUS port") }
        print("Countersign RADIUS bench: \(target.description), RADIUS on UDP 127.0.0.1:\(port), " +
              "\(ProcessInfo.processInfo.activeProcessorCount) cores, load generator in this process")

        let admin = AdminAPIClient(base: target.base, key: target.adminKey)
        let policy = try await BenchPolicy.lift(admin, also: ["totp": true])
        let created = try await admin.send("POST", "/admin/v1/tenants/default/radius-clients", body: [
            "name": "Bench gateway", "networks": ["127.0.0.1/32"], "mode": "passcode", "secret": Self.secret,
        ])
        guard let clientID = ((created as? [String: Any])?["radius_client"] as? [String: Any])?["id"] as? String else {
            throw ValidationError("the server did not create the RADIUS client: \(String(describing: created))")
        }
        let transport = NIOTransport(connections: 2 * pushConcurrency + 16)
        let setupStart = ContinuousClock.now
        let holders = try await TOTPHolders.enroll(users, admin: admin, transport: transport, scratch: scratch)
        print("setup: \(users) users with one device each holding a TOTP seed in \(format((ContinuousClock.now - setupStart).milliseconds / 1000)) s")

        let gateway = RADIUSGateway(
            packets: GatewayPackets(secret: Array(Self.secret.utf8)), base: target.base, port: port,
            sockets: try (0..<((runs.max() ?? 1) + Self.slotsPerSocket - 1) / Self.slotsPerSocket).map { _ in
                try GatewaySocket(serverPort: port)
            })
        let group = users / runs.count
        for (index, concurrency) in runs.enumerated() {
            try await passcodeRuns(concurrency, holders: holders, range: (index * group)..<((index + 1) * group), gateway)
        }

        _ = try await admin.send("PATCH", "/admin/v1/tenants/default/radius-clients/\(clientID)", body: ["mode": "push"])
        try await pushRun(target: target, transport: transport, scratch: scratch, port: port, gateway)
        try await policy.restore(admin)
        try await target.stop()
        try await transport.shutdown()
    }

    /// At `concurrency` in flight: the floor, the accepted codes, their retransmissions, and the
    /// codes again in new requests.
    private func passcodeRuns(
        _ concurrency: Int, holders: TOTPHolders, range: Range<Int>, _ gateway: RADIUSGateway
    ) async throws {
        let count = range.count * 3
        let statusLanes = gateway.lanes(concurrency, requests: count) { identifier, _ in
            gateway.packets.statusServer(identifier: identifier)
        }
        try await gateway.measure("Status-Server (floor: authenticated, nothing looked up)", concurrency, statusLanes)

        // A user's three codes go in one slot, in order, so that each is accepted: a later step
        // accepted first would make the earlier ones used. The run starts as a step begins and
        // ends well inside it, while all three codes are in the window.
        let step = Int64(Date().timeIntervalSince1970) / Int64(Self.period) + 1
        let codes = try await holders.codes(range, steps: [step - 1, step, step + 1])
        let users = Array(holders.holders[range])
        func requests(_ slot: Int, _ identifier: UInt8) -> [GatewayPackets.Request] {
            (0..<3).flatMap { which in
                stride(from: slot, to: users.count, by: concurrency).map { user in
                    gateway.packets.accessRequest(
                        identifier: identifier, userName: users[user].username, password: codes[user][which],
                        callingStation: "198.51.100.7")
                }
            }
        }
        let accepted = gateway.lanes(concurrency, slots: requests)
        let replayed = gateway.lanes(concurrency, slots: requests)
        let wait = Double(step) * Double(Self.period) - Date().timeIntervalSince1970
        guard wait > -5 else { throw ValidationError("writing the requests took longer than a TOTP step; use fewer --users") }
        if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000) + 50)) }
        try await gateway.measure("passcode, new codes (each accepted once)", concurrency, accepted)
        try await gateway.measure("retransmissions of those requests (answered from the duplicate cache)", concurrency, accepted)
        try await gateway.measure("passcode, the same codes in new requests (rejected: used)", concurrency, replayed)
        let left = Double(step + 1) * Double(Self.period) - Date().timeIntervalSince1970
        if left < 0 { print("  note: the runs outlasted the TOTP step by \(format(-left)) s; codes sent after it were rejected as wrong") }
    }

    /// Push logins at `pushConcurrency` in flight, each user's device approving what it is sent.
    private func pushRun(
        target: BenchTarget, transport: NIOTransport, scratch: URL, port: Int, _ gateway: RADIUSGateway
    ) async throws {
        let setupStart = ContinuousClock.now
        let fixture = try await LoopFixture.make(target: target, users: pushConcurrency, transport: transport, scratch: scratch)
        let devices = try await fixture.startDevices()
        print("setup: \(pushConcurrency) users with one device each holding its live stream in \(format((ContinuousClock.now - setupStart).milliseconds / 1000)) s; RADIUS client in push mode")
        let pushGateway = RADIUSGateway(
            packets: gateway.packets, base: target.base, port: port,
            sockets: try (0..<(pushConcurrency + Self.slotsPerSocket - 1) / Self.slotsPerSocket).map { _ in
                try GatewaySocket(serverPort: port)
            },
            timeout: 30)
        let perUser = max(1, pushes / pushConcurrency)
        func logins(_ count: Int) -> [RADIUSLoad.Lane] {
            pushGateway.lanes(pushConcurrency) { slot, identifier in
                (0..<count).map { _ in
                    pushGateway.packets.accessRequest(
                        identifier: identifier, userName: fixture.users[slot].username, password: "push",
                        callingStation: "198.51.100.\(slot % 250 + 1)")
                }
            }
        }
        try await pushGateway.measure("push warm-up (one login per device)", pushConcurrency, logins(1))
        try await pushGateway.measure("push, approved on the device (Access-Request sent → Access-Accept received)",
                                      pushConcurrency, logins(perUser))
        await devices.stop()
    }
}

/// The bench's gateway: its sockets, its packets, and how a run is measured and reported.
struct RADIUSGateway: Sendable {
    let packets: GatewayPackets
    let base: String
    /// The server's RADIUS port.
    let port: Int
    let sockets: [GatewaySocket]
    var timeout = 5.0

    /// Lanes with `concurrency` slots in all, `RADIUSBench.slotsPerSocket` to a socket; `slots`
    /// gives each slot's requests (slot number, and the Identifier they must carry).
    func lanes(
        _ concurrency: Int, slots: (_ slot: Int, _ identifier: UInt8) -> [GatewayPackets.Request]
    ) -> [RADIUSLoad.Lane] {
        stride(from: 0, to: concurrency, by: RADIUSBench.slotsPerSocket).enumerated().map { lane, first in
            let last = min(concurrency, first + RADIUSBench.slotsPerSocket)
            return RADIUSLoad.Lane(socket: sockets[lane], slots: (first..<last).map { slots($0, UInt8($0 - first)) })
        }
    }

    /// Lanes sending `requests` requests in all, spread evenly over the slots.
    func lanes(
        _ concurrency: Int, requests: Int, _ make: (_ identifier: UInt8, _ index: Int) -> GatewayPackets.Request
    ) -> [RADIUSLoad.Lane] {
        lanes(concurrency) { slot, identifier in
            stride(from: slot, to: requests, by: concurrency).map { make(identifier, $0) }
        }
    }

    /// Runs `lanes` and prints what the gateway saw, what the server counted and the CPU spent.
    func measure(_ name: String, _ concurrency: Int, _ lanes: [RADIUSLoad.Lane]) async throws {
        let countersBefore = try await RADIUSCounters.read(base)
        let processBefore = ServerMetrics.cpuSeconds()
        let machineBefore = MachineCPU.busySeconds()
        let ports = Set([port] + sockets.map(\.port))
        let dropsBefore = UDPSocketDrops.read(ports: ports)
        let outcome = await RADIUSLoad(packets: packets, timeout: timeout).run(lanes)
        let process = ServerMetrics.cpuSeconds() - processBefore
        let machine = MachineCPU.busySeconds().flatMap { end in machineBefore.map { end - $0 } }
        let counters = try await RADIUSCounters.read(base).since(countersBefore)
        let drops = UDPSocketDrops.read(ports: ports).flatMap { after in
            dropsBefore.map { before in after.reduce(into: [Int: Int]()) { $0[$1.key] = $1.value - (before[$1.key] ?? 0) } }
        }

        let sorted = outcome.latencies.sorted()
        func percentile(_ p: Double) -> String {
            sorted.isEmpty ? "-" : format(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
        }
        print("\(name): \(concurrency) in flight, \(outcome.sent) sent in \(format(outcome.elapsed)) s, " +
              "\(Int(Double(outcome.answered) / outcome.elapsed)) answers/s")
        let codes = outcome.codes.sorted { $0.key < $1.key }.map { "\($0.value) \(Self.codeName($0.key))" }
        print("  answers: \(codes.isEmpty ? "none" : codes.joined(separator: ", ")); unanswered \(outcome.unanswered); stray \(outcome.stray)")
        for (message, count) in outcome.rejections.sorted(by: { $0.value > $1.value }) { print("    rejected \(count)× \"\(message)\"") }
        print("  latency: p50=\(percentile(0.5)) ms p95=\(percentile(0.95)) ms p99=\(percentile(0.99)) ms max=\(sorted.last.map(format) ?? "-") ms")
        let perRequest = { (seconds: Double) in format(seconds / Double(max(1, outcome.sent)) * 1e6) }
        var cpu = "  cpu per request: \(perRequest(process)) µs for this process, of which \(perRequest(outcome.generatorCPU)) µs the generator's threads"
        if let machine { cpu += "; machine \(format(machine / outcome.elapsed)) of \(ProcessInfo.processInfo.activeProcessorCount) cores busy" }
        print(cpu)
        print("  server counted: \(counters.description)")
        if let drops {
            print("  dropped by the kernel, receive buffer full: \(drops[port] ?? 0) at the server's socket, " +
                  "\(drops.filter { $0.key != port }.values.reduce(0, +)) at the generator's")
        }
    }

    static func codeName(_ code: UInt8) -> String {
        switch code {
        case 2: "Access-Accept"
        case 3: "Access-Reject"
        case 11: "Access-Challenge"
        default: "code \(code)"
        }
    }
}

/// The server's RADIUS counters from `/metrics` (`countersign_radius_*`), by series.
struct RADIUSCounters: Sendable {
    var values: [String: Double] = [:]

    static func read(_ base: String) async throws -> RADIUSCounters {
        let (data, _) = try await URLSession.shared.data(from: URL(string: base + "/metrics")!)
        var counters = RADIUSCounters()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("countersign_radius_") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            counters.values[String(line[..<space]).replacingOccurrences(of: "countersign_radius_", with: "")] = value
        }
        return counters
    }

    func since(_ earlier: RADIUSCounters) -> RADIUSCounters {
        RADIUSCounters(values: values.reduce(into: [:]) { changed, entry in
            let delta = entry.value - (earlier.values[entry.key] ?? 0)
            if delta != 0 { changed[entry.key] = delta }
        })
    }

    var description: String {
        values.isEmpty ? "nothing" : values.sorted { $0.key < $1.key }.map { "\($0.key) +\(Int($0.value))" }.joined(separator: ", ")
    }
}
