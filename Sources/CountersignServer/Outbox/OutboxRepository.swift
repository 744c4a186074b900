import Foundation

/// A row type an outbox claims: decoded by column name, and naming the columns it reads.
protocol OutboxRow: Decodable {
    /// The columns the row's coding keys name, for `RETURNING` and `SELECT`.
    static var columns: String { get }
}

/// The statements every outbox table shares. A row is `queued` until it is claimed; a claim
/// marks it `sending`, counts the attempt and leases it by moving `next_attempt_at` to the end
/// of the lease, so a row whose node stopped mid-send is due again once the lease runs out. An
/// attempt then either puts the row back in the queue or closes it (`sent`, or a status of the
/// feature's own with the reason), and only while the row is still `sending`: an outcome that
/// arrives after another node reclaimed the row changes nothing. Each feature keeps its own row
/// type, enqueue and reads.
struct OutboxRepository: Sendable {
    /// The `last_error` a claim writes on a row it takes over from a node whose lease ran out:
    /// that node's attempt may or may not have reached the provider, and nobody knows which.
    static let cutOffAttempt = "an earlier attempt was cut off before its outcome was recorded"

    let name: String

    /// Claims up to `limit` due rows (queued, or `sending` by a node whose lease ran out), oldest
    /// due first (rows due at once in the order of their ids, which follow the time they were
    /// made), leasing them until `leaseUntil`, and returns them as `Row`. On PostgreSQL rows
    /// claimed by another node are skipped (`FOR UPDATE SKIP LOCKED`), so no two nodes send the
    /// same row at once.
    func claim<Row: OutboxRow>(limit: Int, at date: Date, leaseUntil: Date, as type: Row.Type,
                               on executor: any SQLExecutor) async throws -> [Row] {
        // SQLite has one writer, so its UPDATE is atomic as it stands.
        let skipLocked = executor.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        return try await executor.all(
            """
            UPDATE \(raw: name)
            SET status = 'sending', attempts = attempts + 1, next_attempt_at = \(leaseUntil), updated_at = \(date),
                last_error = CASE WHEN status = 'sending' THEN '\(raw: Self.cutOffAttempt)' ELSE last_error END
            WHERE id IN (
                SELECT id FROM \(raw: name) WHERE status IN ('queued', 'sending') AND next_attempt_at <= \(date)
                ORDER BY next_attempt_at, id LIMIT \(limit)\(raw: skipLocked))
            RETURNING \(raw: Row.columns)
            """, as: type)
    }

    /// Records rows as sent, a chunk of ids at a time.
    func markSent(ids: [String], at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(chunking: ids) { part in
            """
            UPDATE \(raw: name) SET status = 'sent', sent_at = \(date), updated_at = \(date), last_error = NULL
            WHERE status = 'sending' AND id IN (\(list: part))
            """
        }
    }

    /// Puts a row back in the queue, due at `next`, with the reason it was not sent.
    func reschedule(id: String, next: Date, error: String?, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE \(raw: name)
            SET status = 'queued', next_attempt_at = \(next), last_error = \(error), updated_at = \(date)
            WHERE id = \(id) AND status = 'sending'
            """)
    }

    /// Closes a row unsent: `status` is the feature's (`failed`, `cancelled`, `refused`).
    func close<Status: RawRepresentable>(id: String, status: Status, error: String?, at date: Date,
                                         on executor: any SQLExecutor) async throws where Status.RawValue == String {
        try await executor.run(
            """
            UPDATE \(raw: name) SET status = \(status), last_error = \(error), updated_at = \(date)
            WHERE id = \(id) AND status = 'sending'
            """)
    }
}
