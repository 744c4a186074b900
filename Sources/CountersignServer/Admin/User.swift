import Foundation

/// A person who authenticates with Countersign, within one tenant.
public struct User: Sendable, Equatable, Codable {
    public enum Status: String, Codable, Sendable, CaseIterable {
        case active, disabled
    }

    /// Where the user is kept. A `directory` user is the tenant's LDAP directory's: its sync
    /// creates, renames and disables them and never touches a `local` or `scim` user; a `scim`
    /// user was created by a SCIM provisioning client. Admins may still change any user.
    public enum Source: String, Codable, Sendable, CaseIterable {
        case local, scim, directory
    }

    public var id: String
    public var tenantID: String
    public var username: String
    public var displayName: String?
    public var status: Status
    /// Where mail to the user goes (invitations, notices), when known.
    public var email: String? = nil
    /// The provisioning client's own id for the user (SCIM `externalId`).
    public var externalID: String? = nil
    public var source: Source = .local
    /// The directory's stable id for a `directory` user (`entryUUID`, `objectGUID`), which a
    /// rename in the directory keeps.
    public var sourceID: String? = nil
    /// Whether the user's source disabled them (gone from the directory, or disabled there):
    /// the source may enable them again. A user an admin disabled stays disabled.
    public var disabledBySource = false
    /// When a SCIM client deleted the user: kept, disabled, with their devices, but no longer
    /// among SCIM's users; provisioning the same username again brings them back.
    public var deprovisionedAt: Date? = nil
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
        case id, username, status, email, source
        case externalID = "external_id"
        case sourceID = "source_id"
        case disabledBySource = "disabled_by_source"
        case deprovisionedAt = "deprovisioned_at"
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
