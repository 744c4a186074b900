import Foundation

/// An administration API key. The secret is `<id>.<random>`, shown once; only its SHA-256 is
/// stored, and the lookup by id is followed by a constant-time comparison of the hashes.
public struct AdminKey: Sendable, Equatable, Codable {
    public var id: String
    /// nil for a system key, which reaches every tenant.
    public var tenantID: String?
    public var name: String
    public var rights: [AdminRight]
    public var createdBy: String?
    public var createdAt: Date
    public var lastUsedAt: Date?
    public var revokedAt: Date?

    public func holds(_ right: AdminRight) -> Bool { rights.contains(right) }

    /// Whether this key may act on `tenantID`.
    public func reaches(tenantID: String) -> Bool { self.tenantID == nil || self.tenantID == tenantID }

    enum CodingKeys: String, CodingKey {
        case id, name, rights
        case tenantID = "tenant_id"
        case createdBy = "created_by"
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case revokedAt = "revoked_at"
    }
}
