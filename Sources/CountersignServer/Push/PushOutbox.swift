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
        /// Tells the user of something done to their account: a device or passkey added, a
        /// recovery code or pass used (an alert the user may answer with "not me").
        case notice
    }

    public enum Status: String, Sendable, Codable {
        case queued, sending, sent, failed
        /// Not sent because the request was answered first.
        case cancelled
    }

    /// A lowercase UUID; it is also the `apns-id` of the notification.
    public var id: String
    public var tenantID: String
    /// The request the push announces or withdraws; nil for a notice.
    public var transactionID: String?
    /// The security notice the push announces; nil for a request.
    public var noticeID: String?
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
    /// What a notice's alert says: read with the notice when the push is sent
    /// (`PushDispatcher`), never stored in the row.
    public var alert: PushAlert?

    /// The request or notice the push is about: what collapses its notifications.
    public var subjectID: String { transactionID ?? noticeID ?? "" }

    public static func queued(_ kind: Kind, transactionID: String, tenantID: String, deviceID: String,
                       provider: PushRegistration.Provider, expiresAt: Date, at date: Date) -> PushOutboxEntry {
        PushOutboxEntry(
            id: UUID().uuidString.lowercased(), tenantID: tenantID, transactionID: transactionID, noticeID: nil,
            deviceID: deviceID, kind: kind, provider: provider, status: .queued, attempts: 0, nextAttemptAt: date,
            expiresAt: expiresAt, lastError: nil, providerMessageID: nil, createdAt: date, updatedAt: date, sentAt: nil,
            alert: nil)
    }

    /// A notice's push to one of the user's devices.
    public static func notice(_ noticeID: String, tenantID: String, deviceID: String, provider: PushRegistration.Provider,
                              expiresAt: Date, at date: Date) -> PushOutboxEntry {
        PushOutboxEntry(
            id: UUID().uuidString.lowercased(), tenantID: tenantID, transactionID: nil, noticeID: noticeID,
            deviceID: deviceID, kind: .notice, provider: provider, status: .queued, attempts: 0, nextAttemptAt: date,
            expiresAt: expiresAt, lastError: nil, providerMessageID: nil, createdAt: date, updatedAt: date, sentAt: nil,
            alert: nil)
    }
}

/// The title and body of an alert.
public struct PushAlert: Sendable, Equatable {
    public var title: String
    public var body: String
}

/// A row of `push_outbox` is the entry as it is, decoded by column name.
extension PushOutboxEntry: OutboxRow {
    /// The columns `CodingKeys` names, for `SELECT` and `RETURNING`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case transactionID = "transaction_id"
        case noticeID = "notice_id"
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
