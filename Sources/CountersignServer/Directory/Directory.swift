import Foundation

/// A tenant's LDAP directory (Active Directory, OpenLDAP, …): where Countersign finds the
/// tenant's users and groups, how often it syncs them, whether it looks up an unknown username
/// when it is first used, and the service account it reads with. One per tenant. The service
/// account's password is sealed under the master key apart from these settings and never shown.
public struct Directory: Sendable, Equatable, Codable {
    /// What the directory is, which sets the defaults of everything below.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case activeDirectory = "active_directory"
        case openLDAP = "openldap"
    }

    /// How the connection is protected. `plain` sends the service account's password and the
    /// users' passwords in the clear: refused unless every server is on the loopback interface.
    public enum Security: String, Codable, Sendable, CaseIterable {
        case ldaps, starttls, plain
    }

    /// Where a user's direct groups are listed: on the user (`memberOf`, Active Directory's
    /// way, with no ranged lists for large groups) or on each group (`member`).
    public enum Membership: String, Codable, Sendable, CaseIterable {
        case memberOf = "member_of"
        case member
    }

    /// The attributes a user's fields are read from.
    public struct Attributes: Sendable, Equatable, Codable {
        public var username: String
        public var displayName: String
        public var email: String
        /// The stable id that a rename keeps (`objectGUID`, binary, or `entryUUID`, text).
        public var id: String
        /// The user's direct groups, for `Membership.memberOf`.
        public var memberOf: String

        enum CodingKeys: String, CodingKey, CaseIterable {
            case username, email, id
            case displayName = "display_name"
            case memberOf = "member_of"
        }
    }

    /// Which groups are kept and how their members are found.
    public struct Groups: Sendable, Equatable, Codable {
        /// Whether groups are synced at all.
        public var enabled: Bool
        /// Where groups are searched for (the user base when absent).
        public var baseDN: String?
        public var filter: String
        public var nameAttribute: String
        /// The attribute listing a group's members (users and groups), by DN.
        public var memberAttribute: String
        public var membership: Membership
        /// Whether a member of a group that is itself a member of another group is in both.
        public var nested: Bool

        enum CodingKeys: String, CodingKey, CaseIterable {
            case enabled, filter, membership, nested
            case baseDN = "base_dn"
            case nameAttribute = "name_attribute"
            case memberAttribute = "member_attribute"
        }
    }

    public var tenantID: String
    public var kind: Kind
    /// Tried in order; the next is used when one cannot be reached.
    public var servers: [String]
    public var security: Security
    /// A PEM CA certificate (or several) to trust for the servers' certificates, instead of the
    /// system's.
    public var caCertificate: String?
    public var bindDN: String
    public var connectTimeoutSeconds: Int
    public var operationTimeoutSeconds: Int
    public var userBaseDN: String
    public var userFilter: String
    public var attributes: Attributes
    public var groups: Groups
    /// Entries a search asks for per page (RFC 2696).
    public var pageSize: Int
    /// Minutes between scheduled syncs; 0 syncs only on demand.
    public var syncIntervalMinutes: Int
    /// Whether an unknown username at sign-in, CIBA, RADIUS or PAM is looked up in the directory
    /// and the user created when it is there.
    public var justInTime: Bool
    public var createdAt: Date
    public var updatedAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case kind, servers, security, attributes, groups
        case tenantID = "tenant_id"
        case caCertificate = "ca_certificate"
        case bindDN = "bind_dn"
        case connectTimeoutSeconds = "connect_timeout_seconds"
        case operationTimeoutSeconds = "operation_timeout_seconds"
        case userBaseDN = "user_base_dn"
        case userFilter = "user_filter"
        case pageSize = "page_size"
        case syncIntervalMinutes = "sync_interval_minutes"
        case justInTime = "just_in_time"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    /// The defaults of each kind: what a directory of that kind usually holds.
    static func defaults(for kind: Kind) -> (userFilter: String, attributes: Attributes, groups: Groups) {
        switch kind {
        case .activeDirectory:
            (
                // People, not computers, and not disabled (bit 2 of userAccountControl).
                "(&(objectCategory=person)(objectClass=user)(!(userAccountControl:1.2.840.113556.1.4.803:=2)))",
                Attributes(username: "sAMAccountName", displayName: "displayName", email: "mail", id: "objectGUID",
                           memberOf: "memberOf"),
                Groups(enabled: true, baseDN: nil, filter: "(objectClass=group)", nameAttribute: "cn",
                       memberAttribute: "member", membership: .memberOf, nested: true))
        case .openLDAP:
            (
                "(objectClass=inetOrgPerson)",
                Attributes(username: "uid", displayName: "displayName", email: "mail", id: "entryUUID",
                           memberOf: "memberOf"),
                Groups(enabled: true, baseDN: nil, filter: "(|(objectClass=groupOfNames)(objectClass=groupOfUniqueNames))",
                       nameAttribute: "cn", memberAttribute: "member", membership: .member, nested: true))
        }
    }

    static let defaultPageSize = 500
    static let defaultConnectTimeoutSeconds = 5
    static let defaultOperationTimeoutSeconds = 30
}

/// What one sync did or, in a dry run, would do.
public struct DirectorySyncSummary: Sendable, Equatable, Codable {
    /// A user or group the sync left alone, and why.
    public struct Skipped: Sendable, Equatable, Codable {
        public var dn: String
        public var reason: String
    }

    public var dryRun: Bool
    public var startedAt: Date
    public var finishedAt: Date
    /// Users and groups the directory returned.
    public var usersFound: Int
    public var groupsFound: Int
    public var usersCreated: [String] = []
    /// Local users of the same name that the directory now keeps.
    public var usersAdopted: [String] = []
    public var usersUpdated: [String] = []
    public var usersDisabled: [String] = []
    public var usersEnabled: [String] = []
    public var groupsCreated: [String] = []
    public var groupsUpdated: [String] = []
    public var groupsDeleted: [String] = []
    public var membershipsAdded = 0
    public var membershipsRemoved = 0
    public var skipped: [Skipped] = []

    /// Whether the sync changed (or would change) nothing.
    public var isEmpty: Bool {
        usersCreated.isEmpty && usersAdopted.isEmpty && usersUpdated.isEmpty && usersDisabled.isEmpty
            && usersEnabled.isEmpty && groupsCreated.isEmpty && groupsUpdated.isEmpty && groupsDeleted.isEmpty
            && membershipsAdded == 0 && membershipsRemoved == 0
    }

    enum CodingKeys: String, CodingKey {
        case skipped
        case dryRun = "dry_run"
        case startedAt = "started_at"
        case finishedAt = "finished_at"
        case usersFound = "users_found"
        case groupsFound = "groups_found"
        case usersCreated = "users_created"
        case usersAdopted = "users_adopted"
        case usersUpdated = "users_updated"
        case usersDisabled = "users_disabled"
        case usersEnabled = "users_enabled"
        case groupsCreated = "groups_created"
        case groupsUpdated = "groups_updated"
        case groupsDeleted = "groups_deleted"
        case membershipsAdded = "memberships_added"
        case membershipsRemoved = "memberships_removed"
    }
}
