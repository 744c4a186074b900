import Foundation

/// What the group routes (`GroupAdminRoutes`) read and write, and nothing else: a tenant's
/// groups, who is in them, and which groups a user is in. Each write is one transaction with its
/// audit record.
protocol GroupAdminStore: Sendable {
    /// The tenant's groups after `cursor`, by id, each with its member count: only those whose
    /// name starts with `namePrefix` (any case), or kept by `source`, when given.
    func groups(tenantID: String, namePrefix: String?, source: User.Source?, after cursor: String?, limit: Int)
        async throws -> [GroupRecord]
    /// The group with its member count, if it belongs to the tenant.
    func group(id: String, tenantID: String) async throws -> GroupRecord?
    /// Adds the group, as of its `createdAt`; `AdminError.conflict` if the tenant has a group of
    /// that name.
    func create(_ group: UserGroup, actor: String) async throws
    /// Stores the changed group, as of its `updatedAt`, and answers it with its member count;
    /// nil when it was deleted meanwhile, `AdminError.conflict` if the tenant has another group
    /// of that name.
    func update(_ group: UserGroup, actor: String) async throws -> GroupRecord?
    /// Deletes the group and its memberships (never its users); nil when the tenant has no such
    /// group.
    func delete(id: String, tenantID: String, actor: String, at date: Date) async throws -> UserGroup?

    /// The group's members after `cursor` (a user id), by user id.
    func members(groupID: String, after cursor: String?, limit: Int) async throws -> [GroupMember]
    /// Puts the tenant's user in the group.
    func addMember(_ group: UserGroup, userID: String, actor: String, at date: Date) async throws -> MembershipChange
    /// Takes the user out of the group.
    func removeMember(_ group: UserGroup, userID: String, actor: String, at date: Date) async throws -> MembershipChange

    /// The user, if it belongs to the tenant.
    func user(id: String, tenantID: String) async throws -> User?
    /// The groups the user is in, by name, each with its member count.
    func groups(userID: String) async throws -> [GroupRecord]
}

/// What a change of membership did.
enum MembershipChange: Sendable, Equatable {
    /// Added or removed, and recorded.
    case changed
    /// Nothing to do: the user was a member already, or was not one.
    case unchanged
    /// The tenant has no user of that id.
    case noSuchUser
}

/// A group as the API shows it: its fields and how many members it has.
struct GroupRecord: Encodable, Sendable, Equatable {
    let group: UserGroup
    let memberCount: Int

    enum CodingKeys: String, CodingKey {
        case memberCount = "member_count"
    }

    func encode(to encoder: any Encoder) throws {
        try group.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(memberCount, forKey: .memberCount)
    }
}

/// The group routes' store on the server's database (SQLite or PostgreSQL).
struct SQLGroupAdminStore: GroupAdminStore {
    let database: any Database
    let groups: any GroupRepository
    let users: any UserRepository
    let audit: AuditLog

    func groups(tenantID: String, namePrefix: String?, source: User.Source?, after cursor: String?, limit: Int)
        async throws -> [GroupRecord] {
        let found = try await groups.list(
            tenantID: tenantID, namePrefix: namePrefix, source: source, after: cursor, limit: limit, on: database)
        return try await counted(found)
    }

    func group(id: String, tenantID: String) async throws -> GroupRecord? {
        guard let group = try await groups.find(id: id, tenantID: tenantID, on: database) else { return nil }
        return try await counted([group]).first
    }

    func create(_ group: UserGroup, actor: String) async throws {
        try await database.transaction { executor in
            do {
                try await groups.insert(group, on: executor)
            } catch StorageError.uniqueViolation {
                throw AdminError.conflict("a group named \(group.name) already exists in this tenant")
            }
            try await audit.record(
                "group.created", actor: actor, tenantID: group.tenantID, target: ("group", group.id),
                details: Self.details(group), at: group.createdAt, on: executor)
        }
    }

    func update(_ group: UserGroup, actor: String) async throws -> GroupRecord? {
        try await database.transaction { executor in
            guard let before = try await groups.find(id: group.id, tenantID: group.tenantID, on: executor) else { return nil }
            do {
                try await groups.update(group, on: executor)
            } catch StorageError.uniqueViolation {
                throw AdminError.conflict("a group named \(group.name) already exists in this tenant")
            }
            var details = Self.details(group)
            if before.name != group.name { details["previous_name"] = before.name }
            try await audit.record(
                "group.updated", actor: actor, tenantID: group.tenantID, target: ("group", group.id),
                details: details, at: group.updatedAt, on: executor)
            let count = try await groups.memberCounts(groupIDs: [group.id], on: executor)[group.id] ?? 0
            return GroupRecord(group: group, memberCount: count)
        }
    }

    func delete(id: String, tenantID: String, actor: String, at date: Date) async throws -> UserGroup? {
        try await database.transaction { executor in
            guard let group = try await groups.find(id: id, tenantID: tenantID, on: executor) else { return nil }
            let members = try await groups.memberCounts(groupIDs: [id], on: executor)[id] ?? 0
            try await groups.delete(id: id, on: executor)
            var details = Self.details(group)
            details["members"] = String(members)
            try await audit.record(
                "group.deleted", actor: actor, tenantID: tenantID, target: ("group", id), details: details, at: date,
                on: executor)
            return group
        }
    }

    func members(groupID: String, after cursor: String?, limit: Int) async throws -> [GroupMember] {
        try await groups.members(groupID: groupID, after: cursor, limit: limit, on: database)
    }

    func addMember(_ group: UserGroup, userID: String, actor: String, at date: Date) async throws -> MembershipChange {
        try await database.transaction { executor in
            guard let user = try await users.find(id: userID, tenantID: group.tenantID, on: executor) else { return .noSuchUser }
            let added = try await groups.addMembers(groupID: group.id, tenantID: group.tenantID, userIDs: [user.id], on: executor)
            guard !added.isEmpty else { return .unchanged }
            try await audit.record(
                "group.member_added", actor: actor, tenantID: group.tenantID, target: ("group", group.id),
                details: ["name": group.name, "user_id": user.id, "username": user.username], at: date, on: executor)
            return .changed
        }
    }

    func removeMember(_ group: UserGroup, userID: String, actor: String, at date: Date) async throws -> MembershipChange {
        try await database.transaction { executor in
            guard let user = try await users.find(id: userID, tenantID: group.tenantID, on: executor) else { return .noSuchUser }
            let removed = try await groups.removeMembers(groupID: group.id, userIDs: [user.id], on: executor)
            guard !removed.isEmpty else { return .unchanged }
            try await audit.record(
                "group.member_removed", actor: actor, tenantID: group.tenantID, target: ("group", group.id),
                details: ["name": group.name, "user_id": user.id, "username": user.username], at: date, on: executor)
            return .changed
        }
    }

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func groups(userID: String) async throws -> [GroupRecord] {
        try await counted(try await groups.groups(userID: userID, on: database))
    }

    private func counted(_ found: [UserGroup]) async throws -> [GroupRecord] {
        let counts = try await groups.memberCounts(groupIDs: found.map(\.id), on: database)
        return found.map { GroupRecord(group: $0, memberCount: counts[$0.id] ?? 0) }
    }

    private static func details(_ group: UserGroup) -> [String: String] {
        var details = ["name": group.name, "source": group.source.rawValue]
        details["external_id"] = group.externalID
        return details
    }
}
