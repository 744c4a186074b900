import Foundation

/// A person who authenticates with Countersign, within one tenant.
public struct User: Sendable, Equatable, Codable {
    public enum Status: String, Codable, Sendable, CaseIterable {
        case active, disabled
    }

    public var id: String
    public var tenantID: String
    public var username: String
    public var displayName: String?
    public var status: Status
    public var createdAt: Date
    public var updatedAt: Date
    /// After the user answered "I did not request this": no request reaches them before then.
    public var requestsSuppressedUntil: Date? = nil
    /// After too many wrong TOTP codes: no code is checked before then.
    public var totpLockedUntil: Date? = nil
    /// Whether the user has a `user_code` (the code itself is never shown).
    public var hasUserCode = false
    /// After too many wrong user codes: no request needing the code is accepted before then.
    public var userCodeLockedUntil: Date? = nil

    enum CodingKeys: String, CodingKey {
        case id, username, status
        case tenantID = "tenant_id"
        case displayName = "display_name"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case requestsSuppressedUntil = "requests_suppressed_until"
        case totpLockedUntil = "totp_locked_until"
        case hasUserCode = "user_code_set"
        case userCodeLockedUntil = "user_code_locked_until"
    }
}
