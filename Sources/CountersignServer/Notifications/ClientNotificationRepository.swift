import Foundation

/// The storage of client notifications: enqueue with the decision, claim for sending, record
/// the outcome.
public protocol ClientNotificationRepository: Sendable {
    func enqueue(_ notifications: [ClientNotification], on executor: any SQLExecutor) async throws
    /// Claims up to `limit` due rows, leasing them until `leaseUntil` (`FOR UPDATE SKIP LOCKED`
    /// on PostgreSQL, so no two nodes send one row at once).
    func claim(limit: Int, at date: Date, leaseUntil: Date, on executor: any SQLExecutor) async throws -> [ClientNotification]
    /// Records the outcome of an attempt: `next` puts the row back in the queue.
    func record(id: String, status: ClientNotification.Status, next: Date?, error: String?, at date: Date,
                on executor: any SQLExecutor) async throws
    /// The notifications of one request, oldest first.
    func list(transactionID: String, on executor: any SQLExecutor) async throws -> [ClientNotification]
}

public struct SQLClientNotificationRepository: ClientNotificationRepository {
    public init() {}

    private static let table = OutboxRepository(name: "client_notifications")

    private typealias Row = ClientNotification

    public func enqueue(_ notifications: [ClientNotification], on executor: any SQLExecutor) async throws {
        for entry in notifications {
            try await executor.run(
                """
                INSERT INTO client_notifications (id, tenant_id, transaction_id, client_id, kind, error, status,
                    attempts, next_attempt_at, give_up_at, created_at, updated_at)
                VALUES (\(entry.id), \(entry.tenantID), \(entry.transactionID), \(entry.clientID), \(entry.kind),
                    \(entry.error), \(entry.status), \(entry.attempts), \(entry.nextAttemptAt), \(entry.giveUpAt),
                    \(entry.createdAt), \(entry.updatedAt))
                """)
        }
    }

    public func claim(limit: Int, at date: Date, leaseUntil: Date, on executor: any SQLExecutor) async throws
        -> [ClientNotification] {
        try await Self.table.claim(limit: limit, at: date, leaseUntil: leaseUntil, as: Row.self, on: executor)
    }

    public func record(id: String, status: ClientNotification.Status, next: Date?, error: String?, at date: Date,
                       on executor: any SQLExecutor) async throws {
        if let next {
            try await Self.table.reschedule(id: id, next: next, error: error, at: date, on: executor)
        } else if status == .sent {
            try await Self.table.markSent(ids: [id], at: date, on: executor)
        } else {
            try await Self.table.close(id: id, status: status, error: error, at: date, on: executor)
        }
    }

    public func list(transactionID: String, on executor: any SQLExecutor) async throws -> [ClientNotification] {
        try await executor.all(
            "SELECT \(raw: Row.columns) FROM client_notifications WHERE transaction_id = \(transactionID) ORDER BY id",
            as: Row.self
        )
    }
}
