import ArgumentParser
import CountersignCommandLine
import CountersignCore
import CountersignKit
import CountersignPushEmulator
import CountersignServer
import Crypto
import Foundation
import Logging
import NIOCore

/// `countersign-bench push`: how fast the outbox reaches APNs. A burst of notifications is
/// queued in the outbox of a stopped server; a server is then started on the same database and
/// its dispatcher sends them, over HTTP/2 with a provider token, to a local endpoint that speaks
/// the APNs provider API (in this process, sharing its cores). The figure is notifications per
/// second from the start to the last one accepted, with the connections used and any
/// notification received twice.
struct PushBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Benchmark push delivery from the outbox to a local APNs endpoint.")

    @Option(help: "Notifications to queue and send.") var notifications = 50_000
    @Option(help: "Rows a dispatch worker claims at once.") var batch = 512
    @Option(help: "Dispatch workers.") var workers = 4
    @Option(help: "HTTP/2 connections to APNs (at most one per event loop).") var connections = System.coreCount
    @Option(name: .customLong("database-url"), help: "Run on this PostgreSQL database instead of SQLite.") var databaseURL: String?

    func validate() throws {
        guard notifications >= 1, batch >= 1, workers >= 1, connections >= 1 else {
            throw ValidationError("--notifications, --batch, --workers and --connections must be at least 1")
        }
        guard EmulatorPKI.isAvailable else { throw ValidationError("the push bench needs the openssl command") }
    }

    func run() async throws {
        Bench.quietLogging()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-push-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let pki = try EmulatorPKI.make(in: scratch.appendingPathComponent("pki"))
        let signingKey = P256.Signing.PrivateKey()
        let apns = try await APNsEmulator.start(
            pki: pki, authentication: .token([.init(keyID: "BENCH12345", teamID: "TEAM123456", publicKey: signingKey.publicKey)]),
            recording: false)
        var configuration = ServerConfiguration(dataDirectory: scratch.appendingPathComponent("data"))
        configuration.port = 0
        configuration.databaseURL = databaseURL
        configuration.masterKey = MasterKey.generate().base64
        configuration.push.apnsProductionURL = apns.baseURL
        configuration.push.trustedCAFile = pki.caCertificatePath
        configuration.push.batchSize = batch
        configuration.push.workers = workers
        configuration.push.connectionsPerCredential = connections
        configuration.push.dispatch = false
        print("Countersign push bench: \(databaseURL == nil ? "SQLite" : "PostgreSQL"), " +
              "\(ProcessInfo.processInfo.activeProcessorCount) cores, local APNs endpoint in process")

        // One request to one device, then the burst queued behind it.
        let filling = try await CountersignServer.make(configuration: configuration, logger: Logger(label: "bench"))
        let running = try await filling.start()
        let transactionID = try await prepare(running, adminKey: filling.bootstrapAdminKey ?? "", signingKey: signingKey,
                                              scratch: scratch)
        let fillStart = ContinuousClock.now
        let tenantID = filling.defaultTenant.id
        let approvals = SQLApprovalTransactionRepository()
        guard let transaction = try await approvals.find(id: transactionID, on: filling.database),
              let deviceID = try await approvals.deviceIDs(transactionID: transactionID, on: filling.database).first else {
            throw ValidationError("the bench request was not stored")
        }
        var queued = 0
        while queued < notifications {
            let count = min(1000, notifications - queued)
            let now = Date()
            let entries = (0..<count).map { _ in
                PushOutboxEntry.queued(.request, transactionID: transactionID, tenantID: tenantID, deviceID: deviceID,
                                       provider: .apns, expiresAt: transaction.expiresAt, at: now)
            }
            try await filling.database.transaction { executor in
                try await SQLPushOutboxRepository().enqueue(entries, on: executor)
            }
            queued += count
        }
        let total = notifications + 1
        print("queued \(total) notifications in \(format((ContinuousClock.now - fillStart).milliseconds)) ms")
        try await running.stop()

        configuration.push.dispatch = true
        let sending = try await CountersignServer.make(configuration: configuration, logger: Logger(label: "bench"))
        let cpuBefore = ServerMetrics.cpuSeconds()
        let endpointBefore = try await apns.cpuTime()
        let start = ContinuousClock.now
        let dispatching = try await sending.start()
        var lastProgress = ContinuousClock.now
        var lastCount = 0
        while apns.acceptedCount < total {
            try await Task.sleep(for: .milliseconds(5))
            let count = apns.acceptedCount
            if count != lastCount {
                lastCount = count
                lastProgress = ContinuousClock.now
            } else if ContinuousClock.now - lastProgress > .seconds(30) {
                throw ValidationError("no progress for 30 s at \(count) of \(total)")
            }
        }
        let elapsed = (ContinuousClock.now - start).milliseconds / 1000
        let processCPU = ServerMetrics.cpuSeconds() - cpuBefore
        let endpointCPU = try await apns.cpuTime() - endpointBefore
        let endpointSeconds = Double(endpointCPU.components.seconds) + Double(endpointCPU.components.attoseconds) / 1e18
        try await Task.sleep(for: .milliseconds(200))
        let summary = try await sending.database.all(
            "SELECT status, COUNT(*) AS n FROM push_outbox GROUP BY status ORDER BY status", as: StatusCount.self
        ).map { "\($0.status) \($0.n)" }.joined(separator: ", ")
        try await dispatching.stop()
        try await apns.stop()
        print("sent \(apns.acceptedCount) in \(format(elapsed)) s: \(format(Double(total) / elapsed)) notifications/s")
        print("connections to APNs: \(apns.connectionCount); received twice: \(apns.duplicateCount); outbox: \(summary)")
        // The endpoint stands in for Apple's, which costs the server nothing: what the sender
        // side spends per notification is the figure that holds from machine to machine.
        let senderCPU = max(0, processCPU - endpointSeconds)
        print("cpu: \(format(senderCPU / Double(total) * 1_000_000)) µs per notification sending (server, database, TLS), " +
              "\(format(endpointSeconds / Double(total) * 1_000_000)) µs in the endpoint; \(format(processCPU)) s in all")
    }

    /// How many outbox rows ended in one status.
    private struct StatusCount: Decodable {
        var status: String
        var n: Int
    }

    /// Sets the APNs key, enrolls one device with a push token and starts one request to it.
    private func prepare(_ running: CountersignServer.Running, adminKey: String, signingKey: P256.Signing.PrivateKey,
                         scratch: URL) async throws -> String {
        let admin = AdminAPIClient(base: running.baseURL, key: adminKey)
        _ = try await admin.send("PUT", "/admin/v1/tenants/default/push-credentials/apns-token", body: [
            "key_id": "BENCH12345", "team_id": "TEAM123456", "private_key": signingKey.pemRepresentation,
            "topic": "com.example.bench"])
        let created = try await admin.send("POST", "/admin/v1/tenants/default/clients", body: ["name": "Push bench"])
        guard let object = created as? [String: Any], let client = object["client"] as? [String: Any],
              let clientID = client["client_id"] as? String, let secret = object["client_secret"] as? String else {
            throw ValidationError("the server did not create the bench client")
        }
        let user = try await admin.send("POST", "/admin/v1/tenants/default/users", body: ["username": "push-bench"])
        guard let userID = (user as? [String: Any])?["id"] as? String else { throw ValidationError("no user id") }
        let ticket = try await admin.send("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
        guard let uri = (ticket as? [String: Any])?["enrollment_uri"] as? String else { throw ValidationError("no ticket") }
        let transport = NIOTransport(connections: 4)
        let authenticator = CountersignAuthenticator(keyStore: FileKeyStore(root: scratch.appendingPathComponent("device")),
                                                     transport: transport)
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let enrollment = try await authenticator.enroll(
            uri: uri, deviceName: "bench phone", platform: .ios, push: PushRegistration(provider: .apns, token: token))
        let party = RelyingParty(base: running.baseURL, clientID: clientID, secret: secret, transport: transport)
        _ = try await party.authorize(username: "push-bench")
        let pending = try await authenticator.pendingRequests(enrollment.id)
        try await transport.shutdown()
        guard let request = pending.first else { throw ValidationError("the bench request did not reach the device") }
        return request.id
    }
}
