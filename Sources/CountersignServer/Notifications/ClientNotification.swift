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

/// A row of `client_notifications` is the notification as it is, decoded by column name.
extension ClientNotification: OutboxRow {
    /// The columns `CodingKeys` names, for `SELECT` and `RETURNING`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case transactionID = "transaction_id"
        case clientID = "client_id"
        case kind, error, status, attempts
        case nextAttemptAt = "next_attempt_at"
        case giveUpAt = "give_up_at"
        case lastError = "last_error"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case sentAt = "sent_at"
    }
}
