import Foundation

/// `GET /device/v1/notices`: what was done to the user's account that this device is told of
/// (docs/protocol.md §10.15).
public struct SecurityNoticeList: Codable, Sendable, Equatable {
    /// One notice as the device protocol carries it.
    public struct Item: Codable, Sendable, Equatable {
        public var id: String
        /// `device_added`, `passkey_added`, `recovery_code_used` or `access_pass_used`.
        public var kind: String
        public var subjectID: String
        public var subjectName: String?
        public var ipAddress: String?
        public var createdAt: Date
        public var expiresAt: Date
        public var reportedAt: Date?

        public init(id: String, kind: String, subjectID: String, subjectName: String?, ipAddress: String?, createdAt: Date,
                    expiresAt: Date, reportedAt: Date?) {
            self.id = id
            self.kind = kind
            self.subjectID = subjectID
            self.subjectName = subjectName
            self.ipAddress = ipAddress
            self.createdAt = createdAt
            self.expiresAt = expiresAt
            self.reportedAt = reportedAt
        }

        enum CodingKeys: String, CodingKey {
            case id, kind
            case subjectID = "subject_id"
            case subjectName = "subject_name"
            case ipAddress = "ip_address"
            case createdAt = "created_at"
            case expiresAt = "expires_at"
            case reportedAt = "reported_at"
        }
    }

    public var notices: [Item]

    public init(notices: [Item]) { self.notices = notices }
}

/// The answer to `POST /device/v1/notices/<id>/not-me`: what was undone.
public struct NotMeAnswer: Codable, Sendable, Equatable {
    public var id: String
    public var reportedAt: Date
    /// `device`, `passkey`, `recovery_codes` or `access_pass`; nil when it was gone already.
    public var removed: String?
    public var sessionsEnded: Int
    public var requestsSuppressedUntil: Date?

    public init(id: String, reportedAt: Date, removed: String?, sessionsEnded: Int, requestsSuppressedUntil: Date?) {
        self.id = id
        self.reportedAt = reportedAt
        self.removed = removed
        self.sessionsEnded = sessionsEnded
        self.requestsSuppressedUntil = requestsSuppressedUntil
    }

    enum CodingKeys: String, CodingKey {
        case id, removed
        case reportedAt = "reported_at"
        case sessionsEnded = "sessions_ended"
        case requestsSuppressedUntil = "requests_suppressed_until"
    }
}
