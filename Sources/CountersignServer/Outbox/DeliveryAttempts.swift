import Foundation

/// What the administration API's delivery views show of any outbox row: where it stands and how
/// its attempts went. A view encodes it into its own JSON object, beside the fields of its kind
/// of row (an encoder gives the same object to every keyed container asked for at one level).
struct DeliveryAttempts: Encodable, Sendable {
    let id: String
    let status: String
    let attempts: Int
    let lastError: String?
    let createdAt: Date
    let sentAt: Date?
    /// When a queued row is next tried; nil for a row not in the queue, or not to be shown.
    let nextAttemptAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, status, attempts
        case lastError = "last_error"
        case createdAt = "created_at"
        case sentAt = "sent_at"
        case nextAttemptAt = "next_attempt_at"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(status, forKey: .status)
        try container.encode(attempts, forKey: .attempts)
        try container.encodeIfPresent(lastError, forKey: .lastError)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(sentAt, forKey: .sentAt)
        try container.encodeIfPresent(nextAttemptAt, forKey: .nextAttemptAt)
    }
}
