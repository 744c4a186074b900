import Foundation
import Synchronization
import Testing

/// A Shared Signals receiver independent of the server's code (Tests/Peers/ssf_receiver.py):
/// joserfc verifies each SET with the keys the server publishes, and the rules SSF 1.0 sets
/// for one. `push` runs its RFC 8935 endpoint; `poll` runs its RFC 8936 client once. Runs
/// whenever python3 has joserfc (CI installs it); says so when not.
final class SSFReceiverHarness: Sendable {
    static let script = BuildProducts.packageRoot.appendingPathComponent("Tests/Peers/ssf_receiver.py")

    static let available: Bool = {
        guard let python = ChildProcess.find("python3"),
              (try? ChildProcess.runBlocking(python, ["-c", "import joserfc; print('ok')"]))?.contains("ok") == true else {
            FileHandle.standardError.write(Data(
                "Shared Signals receiver tests: SKIPPED: python3 with joserfc is not available (pip install joserfc)\n".utf8))
            return false
        }
        return true
    }()

    /// A SET the receiver verified: its JOSE header and claims.
    struct ReceivedSET: Sendable {
        let header: [String: any Sendable]
        let claims: [String: any Sendable]

        init(_ record: [String: any Sendable]) throws {
            header = try #require(record["header"] as? [String: any Sendable])
            claims = try #require(record["claims"] as? [String: any Sendable])
        }

        var jti: String? { claims["jti"] as? String }
        var subject: [String: any Sendable]? { claims["sub_id"] as? [String: any Sendable] }
        /// The one event's type and payload.
        var event: (type: String, payload: [String: any Sendable])? {
            guard let events = claims["events"] as? [String: any Sendable], let (type, payload) = events.first,
                  let members = payload as? [String: any Sendable] else { return nil }
            return (type, members)
        }
    }

    let directory: URL
    let port: Int
    private let process = Mutex<SpawnedPeer?>(nil)

    private init(directory: URL, port: Int) {
        self.directory = directory
        self.port = port
    }

    var endpoint: String { "http://127.0.0.1:\(port)/events" }

    /// A push endpoint for the transmitter at `base`, expecting `audience`, answering the first
    /// `failFirst` deliveries 503, and 401 to a delivery without `Bearer token` when given.
    /// With `running` false, nothing listens until `start`.
    static func push(base: String, audience: String, failFirst: Int = 0, token: String? = nil, running: Bool = true)
        async throws -> SSFReceiverHarness {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ssf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let harness = SSFReceiverHarness(directory: directory, port: try freeTCPPort())
        harness.arguments.withLock {
            $0 = ["push", "--metadata", base + "/.well-known/ssf-configuration", "--audience", audience,
                  "--port", "\(harness.port)", "--out", directory.path, "--fail-first", "\(failFirst)",
                  "--log", directory.appendingPathComponent("peer.log").path] + (token.map { ["--token", $0] } ?? [])
        }
        if running { try await harness.start() }
        return harness
    }

    private let arguments = Mutex<[String]>([])

    func start() async throws {
        let python = try #require(ChildProcess.find("python3"))
        let ready = directory.appendingPathComponent("ready")
        let peer = try SpawnedPeer(python.path, [Self.script.path] + arguments.withLock { $0 })
        process.withLock { $0 = peer }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if FileManager.default.fileExists(atPath: ready.path) { return }
            if peer.hasEnded() { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent("peer.log"), encoding: .utf8)) ?? ""
        shutdown()
        throw SSFReceiverFailure(message: "the SSF receiver did not start on port \(port): \(log.suffix(2000))")
    }

    func shutdown() {
        process.withLock { peer in
            peer?.stop()
            peer = nil
        }
    }

    func remove() {
        shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    private func records(_ prefix: String) throws -> [[String: any Sendable]] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.sorted()
            .map { try #require(JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent($0))) as? [String: any Sendable]) }
    }

    /// The SETs accepted so far, in order of arrival.
    func received() throws -> [ReceivedSET] { try records("set-").map(ReceivedSET.init) }

    /// The SETs refused so far: `err` and `description`.
    func rejected() throws -> [[String: any Sendable]] { try records("rejected-") }

    func waitFor(_ count: Int, timeout: Double = 30) async throws -> [ReceivedSET] {
        try await eventually("the receiver accepted \(count) SETs", within: timeout) { try received().count >= count }
        return try received()
    }

    /// The poll client: polls `pollURL` with `key` until `count` SETs verified, acknowledging
    /// them; returns them, the SETs it refused, and how many polls it made.
    static func poll(base: String, pollURL: String, key: String, audience: String, count: Int,
                     returnImmediately: Bool = false, maxEvents: Int? = nil, timeout: Int = 30) async throws
        -> (sets: [ReceivedSET], rejected: [[String: any Sendable]], polls: Int) {
        let python = try #require(ChildProcess.find("python3"))
        var arguments = [script.path, "poll", "--metadata", base + "/.well-known/ssf-configuration", "--audience", audience,
                         "--poll-url", pollURL, "--key", key, "--count", "\(count)", "--timeout", "\(timeout)"]
        if returnImmediately { arguments.append("--return-immediately") }
        if let maxEvents { arguments += ["--max-events", "\(maxEvents)"] }
        let finished = try await ChildProcess.spawned(python, arguments, timeout: .seconds(timeout + 60))
        #expect(finished.status == 0, "the poll client: \(finished.output.suffix(2000))")
        // Standard output and error come together; the document is the last line.
        let line = finished.output.split(separator: "\n").last.map(String.init) ?? ""
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: any Sendable], "poll output: \(finished.output)")
        let sets = try (try #require(document["sets"] as? [[String: any Sendable]])).map(ReceivedSET.init)
        return (sets, document["rejected"] as? [[String: any Sendable]] ?? [], document["polls"] as? Int ?? 0)
    }
}

struct SSFReceiverFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
