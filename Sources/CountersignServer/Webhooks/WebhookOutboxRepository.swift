import Foundation

/// The event outbox's storage: enqueue with the change, claim for sending, record the outcome.
public protocol WebhookOutboxRepository: Sendable {
    func enqueue(_ entry: WebhookOutboxEntry, on executor: any SQLExecutor) async throws
    /// Claims up to `limit` due rows (queued, or being sent by a node whose lease ran out),
    /// leasing them until `leaseUntil`. On PostgreSQL rows claimed by another node are skipped
    /// (`FOR UPDATE SKIP LOCKED`), so no two nodes send the same row at once.
    func claim(limit: Int, at date: Date, leaseUntil: Date, on executor: any SQLExecutor) async throws -> [WebhookOutboxEntry]
    func markSent(id: String, at date: Date, on executor: any SQLExecutor) async throws
    /// Puts a row back in the queue, due at `next`, with the reason it was not delivered.
    func reschedule(id: String, next: Date, error: String, at date: Date, on executor: any SQLExecutor) async throws
    func markFailed(id: String, error: String, at date: Date, on executor: any SQLExecutor) async throws
    /// A tenant's rows, newest first, older than `cursor` (an id) if given.
    func recent(tenantID: String, before cursor: String?, limit: Int, on executor: any SQLExecutor) async throws
        -> [WebhookOutboxEntry]
}

public struct SQLWebhookOutboxRepository: WebhookOutboxRepository {
    public init() {}

    private static let table = OutboxRepository(name: "webhook_outbox")

    private typealias Row = WebhookOutboxEntry

    public func enqueue(_ entry: WebhookOutboxEntry, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO webhook_outbox (id, tenant_id, event, payload, status, attempts, next_attempt_at, created_at,
                updated_at)
            VALUES (\(entry.id), \(entry.tenantID), \(entry.event), \(entry.payload), \(entry.status),
                \(entry.attempts), \(entry.nextAttemptAt), \(entry.createdAt), \(entry.updatedAt))
            """)
    }

    public func claim(limit: Int, at date: Date, leaseUntil: Date, on executor: any SQLExecutor) async throws
        -> [WebhookOutboxEntry] {
        try await Self.table.claim(limit: limit, at: date, leaseUntil: leaseUntil, as: Row.self, on: executor)
    }

    public func markSent(id: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.table.markSent(ids: [id], at: date, on: executor)
    }

    public func reschedule(id: String, next: Date, error: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.table.reschedule(id: id, next: next, error: error, at: date, on: executor)
    }

    public func markFailed(id: String, error: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.table.close(id: id, status: WebhookOutboxEntry.Status.failed, error: error, at: date,
                                   on: executor)
    }

    public func recent(tenantID: String, before cursor: String?, limit: Int, on executor: any SQLExecutor) async throws
        -> [WebhookOutboxEntry] {
        let statement: SQLStatement = if let cursor {
            """
            SELECT \(raw: Row.columns) FROM webhook_outbox
            WHERE tenant_id = \(tenantID) AND id < \(cursor) ORDER BY id DESC LIMIT \(limit)
            """
        } else {
            """
            SELECT \(raw: Row.columns) FROM webhook_outbox
            WHERE tenant_id = \(tenantID) ORDER BY id DESC LIMIT \(limit)
            """
        }
        return try await executor.all(statement, as: Row.self)
    }
}
