import Foundation

/// One call to a ping or push client's notification endpoint (CIBA §10.2, §10.3, §12), kept
/// until it is delivered or given up. The row is written in the transaction that decides the
/// request (or, in push mode, finds it expired), so a decision is never announced that was
/// rolled back, nor left unannounced once committed.
public struct ClientNotification: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable {
        /// Ping mode: `{"auth_req_id": …}`; the client then collects the result at `/token`.
        case ping
        /// Push mode, approved: the token response, with `auth_req_id`.
        case pushTokens = "push_tokens"
        /// Push mode, denied or expired: `{"auth_req_id", "error", "error_description"}`.
        case pushError = "push_error"
    }

    public enum Status: String, Sendable, Codable {
        case queued, sending, sent, refused, failed
    }

    /// `cbn_…`.
    public var id: String
    public var tenantID: String
    public var transactionID: String
    public var clientID: String
    public var kind: Kind
    /// For `pushError`: `access_denied` or `expired_token`.
    public var error: String?
    public var status: Status
    public var attempts: Int
    /// When the row is due; while it is being sent, when its lease runs out.
    public var nextAttemptAt: Date
    /// No attempt is made after this.
    public var giveUpAt: Date
    public var lastError: String?
    public var createdAt: Date
    public var updatedAt: Date
    public var sentAt: Date?

    /// What a decision tells the client of `transaction`: nothing in poll mode; a ping; or in
    /// push mode the tokens, or `access_denied`.
    static func announcing(_ transaction: ApprovalTransaction, status: ApprovalTransaction.Status, at date: Date)
        -> ClientNotification? {
        switch (transaction.deliveryMode, status) {
        case (.poll, _), (_, .pending): nil
        case (.ping, _): .queued(.ping, transaction: transaction, at: date)
        case (.push, .approved): .queued(.pushTokens, transaction: transaction, at: date)
        case (.push, .denied): .queued(.pushError, error: "access_denied", transaction: transaction, at: date)
        }
    }

    static func queued(_ kind: Kind, error: String? = nil, transaction: ApprovalTransaction, at date: Date) -> ClientNotification {
        ClientNotification(
            id: Identifier.make("cbn", at: date), tenantID: transaction.tenantID, transactionID: transaction.id,
            clientID: transaction.clientID, kind: kind, error: error, status: .queued, attempts: 0, nextAttemptAt: date,
            giveUpAt: max(date, transaction.expiresAt).addingTimeInterval(ClientNotificationConfiguration.deliveryWindow),
            lastError: nil, createdAt: date, updatedAt: date, sentAt: nil)
    }
}

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

    private static let table = OutboxTable(name: "client_notifications", columns: """
        id, tenant_id, transaction_id, client_id, kind, error, status, attempts, next_attempt_at, give_up_at, last_error,
        created_at, updated_at, sent_at
        """)

    public func enqueue(_ notifications: [ClientNotification], on executor: any SQLExecutor) async throws {
        for entry in notifications {
            try await executor.run(
                """
                INSERT INTO client_notifications (id, tenant_id, transaction_id, client_id, kind, error, status, attempts,
                    next_attempt_at, give_up_at, created_at, updated_at)
                VALUES (\(entry.id), \(entry.tenantID), \(entry.transactionID), \(entry.clientID), \(entry.kind.rawValue), \(entry.error), \(entry.status.rawValue), \(entry.attempts), \(entry.nextAttemptAt), \(entry.giveUpAt), \(entry.createdAt), \(entry.updatedAt))
                """)
        }
    }

    public func claim(limit: Int, at date: Date, leaseUntil: Date, on executor: any SQLExecutor) async throws
        -> [ClientNotification] {
        try await Self.table.claim(limit: limit, at: date, leaseUntil: leaseUntil, on: executor).map(Self.decode)
    }

    public func record(id: String, status: ClientNotification.Status, next: Date?, error: String?, at date: Date,
                       on executor: any SQLExecutor) async throws {
        if let next {
            try await Self.table.reschedule(id: id, next: next, error: error, at: date, on: executor)
        } else if status == .sent {
            try await Self.table.markSent(ids: [id], at: date, on: executor)
        } else {
            try await Self.table.close(id: id, status: status.rawValue, error: error, at: date, on: executor)
        }
    }

    public func list(transactionID: String, on executor: any SQLExecutor) async throws -> [ClientNotification] {
        try await executor.run(
            "SELECT \(raw: Self.table.columns) FROM client_notifications WHERE transaction_id = \(transactionID) ORDER BY id").map(Self.decode)
    }

    static func decode(_ row: SQLRow) throws -> ClientNotification {
        guard let kind = ClientNotification.Kind(rawValue: try row.string("kind")),
              let status = ClientNotification.Status(rawValue: try row.string("status")) else {
            throw StorageError.corrupt("client notification row")
        }
        return ClientNotification(
            id: try row.string("id"), tenantID: try row.string("tenant_id"), transactionID: try row.string("transaction_id"),
            clientID: try row.string("client_id"), kind: kind, error: try row.optionalString("error"), status: status,
            attempts: Int(try row.int("attempts")), nextAttemptAt: try row.date("next_attempt_at"),
            giveUpAt: try row.date("give_up_at"), lastError: try row.optionalString("last_error"),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"), sentAt: try row.optionalDate("sent_at"))
    }
}
