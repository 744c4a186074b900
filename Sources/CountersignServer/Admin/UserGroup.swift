import Foundation

/// A named group of a tenant's users, kept by a source like its users: a directory's group
/// (`source_id` its stable id), a SCIM client's, or an admin's. Policies name groups by `name`,
/// unique within the tenant.
public struct UserGroup: Sendable, Equatable, Codable {
    public var id: String
    public var tenantID: String
    public var name: String
    /// The provisioning client's own id for the group (SCIM `externalId`).
    public var externalID: String?
    public var source: User.Source
    /// The directory's stable id for a `directory` group.
    public var sourceID: String?
    public var createdAt: Date
    public var updatedAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, name, source
        case tenantID = "tenant_id"
        case externalID = "external_id"
        case sourceID = "source_id"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}

/// A member of a group as lists show it.
public struct GroupMember: Sendable, Equatable, Codable {
    public var userID: String
    public var username: String

    enum CodingKeys: String, CodingKey {
        case username
        case userID = "user_id"
    }
}
