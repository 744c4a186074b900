import Foundation

/// One event for a tenant's event receiver, kept until it is delivered or given up. The row is
/// written in the transaction of what it reports, so an event is never sent for a change that
/// was rolled back, nor lost for one that was committed.
public struct WebhookOutboxEntry: Sendable, Equatable {
    public enum Status: String, Sendable, Codable {
        case queued, sending, sent, failed
    }

    /// `whd_…`; also the body's `id` and the `Countersign-Delivery` header, the same on every
    /// attempt, so a receiver can drop a repeat.
    public var id: String
    public var tenantID: String
    public var event: String
    /// The exact body sent, on every attempt.
    public var payload: String
    public var status: Status
    public var attempts: Int
    /// When the row is due; while it is being sent, when its lease runs out.
    public var nextAttemptAt: Date
    public var lastError: String?
    public var createdAt: Date
    public var updatedAt: Date
    public var sentAt: Date?
}

/// A row of `webhook_outbox` is the entry as it is, decoded by column name.
extension WebhookOutboxEntry: OutboxRow {
    /// The columns `CodingKeys` names, for `SELECT` and `RETURNING`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case event, payload, status, attempts
        case nextAttemptAt = "next_attempt_at"
        case lastError = "last_error"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case sentAt = "sent_at"
    }
}
