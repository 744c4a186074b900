import CountersignCore
import Foundation

/// One notification to send, kept until it is sent or given up: the durable half of push
/// delivery. Rows are written in the transaction that creates (or decides) the request they
/// announce, so a request is never stored without its pushes, nor a push sent for a request
/// that was rolled back.
public struct PushOutboxEntry: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable {
        /// Announces a new request (an alert).
        case request
        /// Tells a device to take down the alert of a request answered elsewhere.
        case withdraw
    }

    public enum Status: String, Sendable, Codable {
        case queued, sending, sent, failed
        /// Not sent because the request was answered first.
        case cancelled
    }

    /// A lowercase UUID; it is also the `apns-id` of the notification.
    public var id: String
    public var tenantID: String
    public var transactionID: String
    public var deviceID: String
    public var kind: Kind
    public var provider: PushRegistration.Provider
    public var status: Status
    public var attempts: Int
    /// When the row is due; while it is being sent, when its lease runs out.
    public var nextAttemptAt: Date
    public var expiresAt: Date
    public var lastError: String?
    public var providerMessageID: String?
    public var createdAt: Date
    public var updatedAt: Date
    public var sentAt: Date?

    public static func queued(_ kind: Kind, transactionID: String, tenantID: String, deviceID: String,
                       provider: PushRegistration.Provider, expiresAt: Date, at date: Date) -> PushOutboxEntry {
        PushOutboxEntry(
            id: UUID().uuidString.lowercased(), tenantID: tenantID, transactionID: transactionID, deviceID: deviceID,
            kind: kind, provider: provider, status: .queued, attempts: 0, nextAttemptAt: date, expiresAt: expiresAt,
            lastError: nil, providerMessageID: nil, createdAt: date, updatedAt: date, sentAt: nil)
    }
}

/// The outbox's storage: enqueue with the request, claim for sending, record the outcome.
public protocol PushOutboxRepository: Sendable {
    func enqueue(_ entries: [PushOutboxEntry], on executor: any SQLExecutor) async throws
    /// Claims up to `limit` due rows (queued, or being sent by a node whose lease ran out),
    /// leasing them until `leaseUntil`. On PostgreSQL rows claimed by another node are skipped
    /// (`FOR UPDATE SKIP LOCKED`), so no two nodes send the same row.
    func claim(limit: Int, at date: Date, leaseUntil: Date, on executor: any SQLExecutor) async throws -> [PushOutboxEntry]
    /// Records rows as sent (each with the provider's message id, if it gave one).
    func markSent(_ sent: [(id: String, providerMessageID: String?)], at date: Date, on executor: any SQLExecutor) async throws
    /// Puts a row back in the queue, due at `next`, with the reason it was not sent.
    func reschedule(id: String, next: Date, error: String, at date: Date, on executor: any SQLExecutor) async throws
    func markFailed(id: String, error: String, at date: Date, on executor: any SQLExecutor) async throws
    func markCancelled(id: String, reason: String, at date: Date, on executor: any SQLExecutor) async throws
    /// Cancels the request pushes of a transaction that are still queued, and returns the
    /// devices (other than `decidingDevice`) whose request push went out or is going out: the
    /// ones that show an alert to take down.
    func cancelRequests(transactionID: String, decidingDevice: String, at date: Date, on executor: any SQLExecutor) async throws
        -> [(deviceID: String, provider: PushRegistration.Provider)]
    /// Every row of a transaction, oldest first.
    func entries(transactionID: String, on executor: any SQLExecutor) async throws -> [PushOutboxEntry]
    /// The tenant's rows, newest first, those in `status` only when it is given, from before
    /// `before` (a row's creation time and id) when it is given.
    func recent(tenantID: String, status: PushOutboxEntry.Status?, before: (createdAt: Date, id: String)?, limit: Int,
                on executor: any SQLExecutor) async throws -> [PushOutboxEntry]
}

public struct SQLPushOutboxRepository: PushOutboxRepository {
    public init() {}

    private static let table = OutboxTable(name: "push_outbox")

    private typealias Row = PushOutboxEntry

    public func enqueue(_ entries: [PushOutboxEntry], on executor: any SQLExecutor) async throws {
        guard !entries.isEmpty else { return }
        // One statement for all rows: a request to a user with several devices stays one round trip.
        // `\(rows:)` takes values: `SQLValue(_:)` writes an enumeration by its raw value.
        let rows: [[SQLValue]] = entries.map { entry in
            [entry.id.sqlValue, entry.tenantID.sqlValue, entry.transactionID.sqlValue, entry.deviceID.sqlValue,
             SQLValue(entry.kind), SQLValue(entry.provider), SQLValue(entry.status),
             entry.attempts.sqlValue, entry.nextAttemptAt.sqlValue, entry.expiresAt.sqlValue, entry.createdAt.sqlValue,
             entry.updatedAt.sqlValue]
        }
        try await executor.run(
            """
            INSERT INTO push_outbox (id, tenant_id, transaction_id, device_id, kind, provider, status, attempts,
                next_attempt_at, expires_at, created_at, updated_at)
            VALUES \(rows: rows)
            """)
    }

    public func claim(limit: Int, at date: Date, leaseUntil: Date, on executor: any SQLExecutor) async throws
        -> [PushOutboxEntry] {
        try await Self.table.claim(limit: limit, at: date, leaseUntil: leaseUntil, as: Row.self, on: executor)
    }

    public func markSent(_ sent: [(id: String, providerMessageID: String?)], at date: Date,
                         on executor: any SQLExecutor) async throws {
        // Rows without a message id of their own (APNs echoes ours) are recorded a chunk at a time.
        try await Self.table.markSent(ids: sent.filter { $0.providerMessageID == nil }.map(\.id), at: date, on: executor)
        for (id, messageID) in sent {
            guard let messageID else { continue }
            try await executor.run(
                """
                UPDATE push_outbox
                SET status = 'sent', sent_at = \(date), updated_at = \(date), last_error = NULL,
                    provider_message_id = \(messageID)
                WHERE id = \(id) AND status = 'sending'
                """)
        }
    }

    public func reschedule(id: String, next: Date, error: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.table.reschedule(id: id, next: next, error: error, at: date, on: executor)
    }

    public func markFailed(id: String, error: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.table.close(id: id, status: PushOutboxEntry.Status.failed, error: error, at: date, on: executor)
    }

    public func markCancelled(id: String, reason: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.table.close(id: id, status: PushOutboxEntry.Status.cancelled, error: reason, at: date,
                                   on: executor)
    }

    /// A request's push, as `cancelRequests` reads it.
    private struct RequestPush: Decodable {
        var id: String
        var deviceID: String
        var provider: PushRegistration.Provider
        var status: PushOutboxEntry.Status

        enum CodingKeys: String, CodingKey {
            case id, deviceID = "device_id", provider, status
        }
    }

    /// Reads the request's pushes first, and cancels only when one is still queued: a request
    /// to devices that hold their live streams has no pushes, and costs one statement. A push
    /// seen queued that a sender claims before the cancellation reaches it goes out, so it is
    /// counted as alerted.
    public func cancelRequests(transactionID: String, decidingDevice: String, at date: Date, on executor: any SQLExecutor)
        async throws -> [(deviceID: String, provider: PushRegistration.Provider)] {
        let pushes = try await executor.all(
            """
            SELECT id, device_id, provider, status FROM push_outbox
            WHERE transaction_id = \(transactionID) AND kind = 'request'
            """, as: RequestPush.self)
        var cancelled: Set<String> = []
        if pushes.contains(where: { $0.status == .queued }) {
            cancelled = Set(try await executor.run(
                """
                UPDATE push_outbox
                SET status = 'cancelled', last_error = 'answered before it was sent', updated_at = \(date)
                WHERE transaction_id = \(transactionID) AND kind = 'request' AND status = 'queued'
                RETURNING id
                """).map { (row) throws(StorageError) in try row.decode(column: "id", as: String.self) })
        }
        return pushes.filter { push in
            guard push.deviceID != decidingDevice else { return false }
            switch push.status {
            case .sent, .sending: return true
            case .queued: return !cancelled.contains(push.id)
            case .failed, .cancelled: return false
            }
        }.map { ($0.deviceID, $0.provider) }
    }

    public func entries(transactionID: String, on executor: any SQLExecutor) async throws -> [PushOutboxEntry] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM push_outbox
            WHERE transaction_id = \(transactionID) ORDER BY created_at, kind, device_id
            """, as: Row.self
        )
    }

    public func recent(tenantID: String, status: PushOutboxEntry.Status?, before: (createdAt: Date, id: String)?, limit: Int,
                       on executor: any SQLExecutor) async throws -> [PushOutboxEntry] {
        // A far future time and an id above every id stand for "from the newest".
        let (time, id) = before ?? (Date.distantFuture, "~")
        return try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM push_outbox
            WHERE tenant_id = \(tenantID) AND (created_at, id) < (\(time), \(id))
                \(raw: status.map { "AND status = '\($0.rawValue)'" } ?? "")
            ORDER BY created_at DESC, id DESC LIMIT \(limit)
            """, as: Row.self)
    }

    /// Pushes of the tenant that failed for good, per hour from `fromHour` (hours since 1970).
    func hourlyFailures(tenantID: String, fromHour: Int64, on executor: any SQLExecutor) async throws -> [PushHourlyFailures] {
        try await executor.all(
            """
            SELECT created_at / 3600000 AS hour, COUNT(*) AS failures
            FROM push_outbox
            WHERE tenant_id = \(tenantID) AND status = 'failed' AND created_at >= \(fromHour * 3_600_000)
            GROUP BY created_at / 3600000
            """, as: PushHourlyFailures.self)
    }
}

/// A row of `push_outbox` is the entry as it is, decoded by column name.
extension PushOutboxEntry: OutboxRow {
    /// The columns `CodingKeys` names, for `SELECT` and `RETURNING`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case transactionID = "transaction_id"
        case deviceID = "device_id"
        case kind, provider, status, attempts
        case nextAttemptAt = "next_attempt_at"
        case expiresAt = "expires_at"
        case lastError = "last_error"
        case providerMessageID = "provider_message_id"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case sentAt = "sent_at"
    }
}

/// One hour of a tenant's failed pushes (`hour` counts hours since 1970).
struct PushHourlyFailures: Decodable, Sendable {
    let hour: Int64, failures: Int64
}
