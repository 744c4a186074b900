import CountersignCore
import Foundation

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

    private static let table = OutboxRepository(name: "push_outbox")

    private typealias Row = PushOutboxEntry

    public func enqueue(_ entries: [PushOutboxEntry], on executor: any SQLExecutor) async throws {
        guard !entries.isEmpty else { return }
        // One statement for all rows: a request to a user with several devices stays one round trip.
        // `\(rows:)` takes values: `SQLValue(_:)` writes an enumeration by its raw value.
        let rows: [[SQLValue]] = entries.map { entry in
            [entry.id.sqlValue, entry.tenantID.sqlValue, SQLValue(entry.transactionID), SQLValue(entry.noticeID),
             entry.deviceID.sqlValue,
             SQLValue(entry.kind), SQLValue(entry.provider), SQLValue(entry.status),
             entry.attempts.sqlValue, entry.nextAttemptAt.sqlValue, entry.expiresAt.sqlValue, entry.createdAt.sqlValue,
             entry.updatedAt.sqlValue]
        }
        try await executor.run(
            """
            INSERT INTO push_outbox (id, tenant_id, transaction_id, notice_id, device_id, kind, provider, status,
                attempts, next_attempt_at, expires_at, created_at, updated_at)
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

/// One hour of a tenant's failed pushes (`hour` counts hours since 1970).
struct PushHourlyFailures: Decodable, Sendable {
    let hour: Int64, failures: Int64
}
