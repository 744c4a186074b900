import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOSSL
import SwiftASN1
import Synchronization
import X509

/// Where the FIDO metadata BLOB comes from and what it must chain to: `--fido-metadata` and
/// `--fido-metadata-root` of `countersign serve`.
public struct MetadataConfiguration: Sendable {
    /// An `https://` URL (the FIDO Alliance's is `https://mds3.fidoalliance.org/`), or a file.
    public var source: String
    /// The roots the BLOB's `x5c` chain may end at (the FIDO Alliance signs under GlobalSign
    /// Root CA R3).
    var roots: [Certificate]
    /// How long a loaded BLOB is used before the source is read again, however far off its
    /// `nextUpdate` is.
    public var refreshInterval: TimeInterval = 86_400
    /// How long after a failed attempt the next one is made.
    public var retryInterval: TimeInterval = 3_600
    public var downloadTimeout: Duration = .seconds(60)

    init(source: String, roots: [Certificate]) {
        self.source = source
        self.roots = roots
    }

    /// The roots read from a PEM file of one or more certificates.
    public init(source: String, rootPEMFile path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let documents = try PEMDocument.parseMultiple(pemString: text)
        guard !documents.isEmpty else { throw MetadataBLOBError.malformed("\(path) holds no PEM certificate") }
        self.init(source: source, roots: try documents.map { try Certificate(pemDocument: $0) })
    }
}

/// What a load of the metadata did.
enum MetadataLoadOutcome: String, Sendable, Codable {
    /// A newer BLOB was verified and its entries replaced the loaded ones.
    case loaded
    /// The BLOB verified but its serial number is the loaded one's: nothing changed.
    case unchanged
    /// Another node is loading it now.
    case busy
}

/// The FIDO Metadata Service on this node: loads the BLOB (on a schedule, `MetadataScheduler`,
/// or when an operator asks), keeps its entries in the database for every node, and gives
/// registrations the entries of the BLOB loaded last, read from the database once per serial.
final class AuthenticatorMetadataService: Sendable {
    static let lease: TimeInterval = 10 * 60
    /// How often a node asks the database whether another node loaded a newer BLOB.
    static let serialCheckInterval: TimeInterval = 30

    let configuration: MetadataConfiguration?
    let database: any Database
    let repository = SQLMetadataRepository()
    let metrics: ServerMetrics
    let logger: Logger
    let now: @Sendable () -> Date
    private let cached = Mutex<(snapshot: AuthenticatorMetadataSnapshot, checkedAt: Date)>((.empty, .distantPast))

    init(
        configuration: MetadataConfiguration?, database: any Database, metrics: ServerMetrics, logger: Logger,
        now: @escaping @Sendable () -> Date
    ) {
        self.configuration = configuration
        self.database = database
        self.metrics = metrics
        self.logger = logger
        self.now = now
    }

    /// The entries of the BLOB loaded last (empty when none is configured or loaded). Another
    /// node's load is seen within `serialCheckInterval`.
    func snapshot() async throws -> AuthenticatorMetadataSnapshot {
        guard configuration != nil else { return .empty }
        let date = now()
        let (current, checkedAt) = cached.withLock { $0 }
        guard date.timeIntervalSince(checkedAt) >= Self.serialCheckInterval || date < checkedAt else { return current }
        let serial = try await repository.serial(on: database)
        guard serial != current.serial else {
            cached.withLock { $0.checkedAt = date }
            return current
        }
        let fresh = AuthenticatorMetadataSnapshot(serial: serial, entries: try await repository.entries(on: database))
        cached.withLock { $0 = (fresh, date) }
        return fresh
    }

    func state() async throws -> MetadataSourceState {
        try await repository.state(on: database)
    }

    /// Whether the schedule should read the source now: never read; the last read failed and the
    /// retry interval is up; the last read succeeded a refresh interval ago, or the loaded BLOB's
    /// `nextUpdate` has passed and the retry interval is up.
    func isDue(_ state: MetadataSourceState, at date: Date) -> Bool {
        guard let configuration else { return false }
        guard let checkedAt = state.checkedAt else { return true }
        let since = date.timeIntervalSince(checkedAt)
        if state.lastError != nil { return since >= configuration.retryInterval }
        if since >= configuration.refreshInterval { return true }
        if let nextUpdate = state.nextUpdate, nextUpdate < MetadataDate.string(date) { return since >= configuration.retryInterval }
        return false
    }

    /// Reads, verifies and stores the BLOB, if this node wins the lease. A failure is recorded
    /// (the loaded entries stay in use) and thrown.
    func load() async throws -> MetadataLoadOutcome {
        guard let configuration else { throw MetadataBLOBError.unreachable("no metadata source is configured") }
        let date = now()
        guard try await repository.acquireLease(until: date.addingTimeInterval(Self.lease), now: date, on: database) else {
            metrics.metadataRead(MetadataLoadOutcome.busy.rawValue)
            return .busy
        }
        do {
            let token = try await read(configuration)
            let blob = try await MetadataBLOB.verify(token, roots: configuration.roots, at: date)
            let loaded = try await repository.serial(on: database)
            if let loaded, blob.serial <= loaded {
                guard blob.serial == loaded else { throw MetadataBLOBError.notNewer(serial: blob.serial, loaded: loaded) }
                try await repository.recordAttempt(error: nil, at: date, on: database)
                metrics.metadataRead(MetadataLoadOutcome.unchanged.rawValue)
                return .unchanged
            }
            try await database.transaction { [repository] executor in
                try await repository.replace(with: blob, at: date, on: executor)
            }
            cached.withLock { $0.checkedAt = .distantPast }
            logger.info("FIDO metadata loaded", metadata: ["serial": "\(blob.serial)", "entries": "\(blob.entries.count)"])
            metrics.metadataRead(MetadataLoadOutcome.loaded.rawValue)
            return .loaded
        } catch {
            let reason = (error as? MetadataBLOBError)?.description ?? "\(error)"
            try? await repository.recordAttempt(error: reason, at: date, on: database)
            metrics.metadataRead("failed")
            logger.warning("FIDO metadata not loaded", metadata: ["error": "\(reason)"])
            throw error
        }
    }

    private func read(_ configuration: MetadataConfiguration) async throws(MetadataBLOBError) -> String {
        let source = configuration.source
        let body: Data
        if source.hasPrefix("https://") || source.hasPrefix("http://") {
            body = try await Self.download(source, timeout: configuration.downloadTimeout)
        } else {
            guard let handle = FileHandle(forReadingAtPath: source) else { throw .unreachable("\(source) cannot be opened") }
            defer { try? handle.close() }
            do {
                body = try handle.read(upToCount: MetadataBLOB.maximumSize + 1) ?? Data()
            } catch {
                throw .unreachable("\(source): \(error)")
            }
        }
        guard body.count <= MetadataBLOB.maximumSize else { throw .unreachable("the BLOB is larger than 64 MiB") }
        guard let text = String(data: body, encoding: .utf8) else { throw .malformed("the BLOB is not UTF-8 text") }
        return text
    }

    private static func download(_ url: String, timeout: Duration) async throws(MetadataBLOBError) -> Data {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .follow(max: 3, allowCycles: false))
        configuration.httpVersion = .http1Only
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "User-Agent", value: "Countersign/1")
        let exchange = request
        do {
            return try await HTTPClient.withHTTPClient(configuration: configuration) { client in
                let response = try await client.execute(exchange, timeout: .seconds(timeout.components.seconds))
                guard response.status == .ok else { throw MetadataBLOBError.unreachable("the source answered \(response.status.code)") }
                return Data(try await response.body.collect(upTo: MetadataBLOB.maximumSize).readableBytesView)
            }
        } catch let error as MetadataBLOBError {
            throw error
        } catch is NIOTooManyBytesError {
            throw .unreachable("the BLOB is larger than 64 MiB")
        } catch {
            throw .unreachable("\(error)")
        }
    }
}
