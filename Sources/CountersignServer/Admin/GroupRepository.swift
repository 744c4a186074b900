import Foundation

/// A tenant's groups and who is in them (`user_groups`, `group_members`).
public protocol GroupRepository: Sendable {
    func insert(_ group: UserGroup, on executor: any SQLExecutor) async throws
    /// Stores the group's name, external id and source.
    func update(_ group: UserGroup, on executor: any SQLExecutor) async throws
    /// Deletes the group and its memberships (never its users).
    func delete(id: String, on executor: any SQLExecutor) async throws
    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> UserGroup?
    func find(name: String, tenantID: String, on executor: any SQLExecutor) async throws -> UserGroup?
    func find(sourceID: String, source: User.Source, tenantID: String, on executor: any SQLExecutor) async throws -> UserGroup?
    /// The tenant's groups after `cursor`, by id; only those kept by `source` when it is given,
    /// only the one named `name` (any case) when that is.
    func list(tenantID: String, source: User.Source?, name: String?, after cursor: String?, limit: Int,
              on executor: any SQLExecutor) async throws -> [UserGroup]
    /// The tenant's groups matching `match` (all when nil), by id, `offset` of them skipped;
    /// and how many match in all (SCIM's lists).
    func list(tenantID: String, matching match: GroupMatch?, offset: Int, limit: Int,
              on executor: any SQLExecutor) async throws -> (total: Int, groups: [UserGroup])
    /// How many groups the tenant has.
    func count(tenantID: String, on executor: any SQLExecutor) async throws -> Int

    /// Adds the users of the group's tenant among `userIDs` to the group; returns those who were
    /// not members before. Ids of other tenants' users or of no user are ignored.
    func addMembers(groupID: String, tenantID: String, userIDs: [String], on executor: any SQLExecutor) async throws -> [String]
    /// Removes these users from the group; returns those who were members.
    func removeMembers(groupID: String, userIDs: [String], on executor: any SQLExecutor) async throws -> [String]
    /// The group's members after `cursor` (a user id), by user id.
    func members(groupID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [GroupMember]
    /// The ids of every member of the group.
    func memberIDs(groupID: String, on executor: any SQLExecutor) async throws -> Set<String>
    /// The groups the user is in, by name.
    func groups(userID: String, on executor: any SQLExecutor) async throws -> [UserGroup]
    /// The names of the groups each of these users is in, by user id (users in none are absent).
    func groupNames(userIDs: [String], on executor: any SQLExecutor) async throws -> [String: [String]]
    /// The groups (id and name, by name) each of `userIDs` is in, by user id.
    func memberships(userIDs: [String], on executor: any SQLExecutor) async throws -> [String: [(id: String, name: String)]]
    /// The tenant's groups after `cursor`, by id: only those whose name starts with `namePrefix`
    /// (any case) and those kept by `source`, when given.
    func list(tenantID: String, namePrefix: String?, source: User.Source?, after cursor: String?, limit: Int,
              on executor: any SQLExecutor) async throws -> [UserGroup]
    /// How many members each of these groups has, by group id (empty groups are absent).
    func memberCounts(groupIDs: [String], on executor: any SQLExecutor) async throws -> [String: Int]
}

/// What a SCIM filter may ask of groups.
public enum GroupMatch: Sendable, Equatable {
    case id(String)
    /// Any case.
    case name(String)
    case externalID(String)
}

public struct SQLGroupRepository: GroupRepository {
    public init() {}

    private static let columns = UserGroup.CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")
    private static let prefixedColumns = UserGroup.CodingKeys.allCases.map { "user_groups.\($0.rawValue)" }
        .joined(separator: ", ")

    public func insert(_ group: UserGroup, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO user_groups (id, tenant_id, name, external_id, source, source_id, created_at, updated_at)
            VALUES (\(group.id), \(group.tenantID), \(group.name), \(group.externalID), \(group.source), \(group.sourceID),
                \(group.createdAt), \(group.updatedAt))
            """)
    }

    public func update(_ group: UserGroup, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE user_groups SET name = \(group.name), external_id = \(group.externalID), source = \(group.source),
                source_id = \(group.sourceID), updated_at = \(group.updatedAt)
            WHERE id = \(group.id)
            """)
    }

    public func delete(id: String, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM user_groups WHERE id = \(id)")
    }

    public func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> UserGroup? {
        try await executor.first(
            "SELECT \(raw: Self.columns) FROM user_groups WHERE id = \(id) AND tenant_id = \(tenantID)", as: UserGroup.self)
    }

    public func find(name: String, tenantID: String, on executor: any SQLExecutor) async throws -> UserGroup? {
        try await executor.first(
            "SELECT \(raw: Self.columns) FROM user_groups WHERE name = \(name) AND tenant_id = \(tenantID)", as: UserGroup.self)
    }

    public func find(sourceID: String, source: User.Source, tenantID: String,
                     on executor: any SQLExecutor) async throws -> UserGroup? {
        try await executor.first(
            """
            SELECT \(raw: Self.columns) FROM user_groups
            WHERE tenant_id = \(tenantID) AND source = \(source) AND source_id = \(sourceID)
            """, as: UserGroup.self)
    }

    public func list(tenantID: String, source: User.Source?, name: String?, after cursor: String?, limit: Int,
                     on executor: any SQLExecutor) async throws -> [UserGroup] {
        let sourceName = source?.rawValue ?? ""
        let lowered = name?.lowercased() ?? ""
        return try await executor.all(
            """
            SELECT \(raw: Self.columns) FROM user_groups
            WHERE tenant_id = \(tenantID) AND (\(sourceName) = '' OR source = \(sourceName))
                AND (\(lowered) = '' OR lower(name) = \(lowered)) AND id > \(cursor ?? "")
            ORDER BY id LIMIT \(limit)
            """, as: UserGroup.self)
    }

    public func list(tenantID: String, matching match: GroupMatch?, offset: Int, limit: Int,
                     on executor: any SQLExecutor) async throws -> (total: Int, groups: [UserGroup]) {
        let condition: SQLStatement = switch match {
        case nil: "1 = 1"
        case .id(let id): "id = \(id)"
        case .name(let name): "lower(name) = \(name.lowercased())"
        case .externalID(let id): "external_id = \(id)"
        }
        let total = try await executor.first(
            "SELECT COUNT(*) AS matching FROM user_groups WHERE tenant_id = \(tenantID) AND \(condition)",
            column: "matching", as: Int.self) ?? 0
        let groups = try await executor.all(
            """
            SELECT \(raw: Self.columns) FROM user_groups WHERE tenant_id = \(tenantID) AND \(condition)
            ORDER BY id LIMIT \(limit) OFFSET \(offset)
            """, as: UserGroup.self)
        return (total, groups)
    }

    public func count(tenantID: String, on executor: any SQLExecutor) async throws -> Int {
        try await executor.first(
            "SELECT COUNT(*) AS groups_count FROM user_groups WHERE tenant_id = \(tenantID)", column: "groups_count",
            as: Int.self) ?? 0
    }

    public func addMembers(groupID: String, tenantID: String, userIDs: [String],
                           on executor: any SQLExecutor) async throws -> [String] {
        // One statement per part: only the tenant's users go in, and a member already there is
        // left as is (the SELECT's WHERE also tells SQLite that ON CONFLICT is not a join's).
        try await executor.run(chunking: Array(Set(userIDs)).sorted()) { part in
            """
            INSERT INTO group_members (group_id, user_id)
            SELECT \(groupID), id FROM users WHERE id IN (\(list: part)) AND tenant_id = \(tenantID)
            ON CONFLICT DO NOTHING RETURNING user_id
            """
        }.map { try $0.decode(column: "user_id", as: String.self) }
    }

    public func removeMembers(groupID: String, userIDs: [String], on executor: any SQLExecutor) async throws -> [String] {
        try await executor.run(chunking: Array(Set(userIDs)).sorted()) { part in
            "DELETE FROM group_members WHERE group_id = \(groupID) AND user_id IN (\(list: part)) RETURNING user_id"
        }.map { try $0.decode(column: "user_id", as: String.self) }
    }

    public func members(groupID: String, after cursor: String?, limit: Int,
                        on executor: any SQLExecutor) async throws -> [GroupMember] {
        try await executor.all(
            """
            SELECT users.id AS user_id, users.username AS username
            FROM group_members JOIN users ON users.id = group_members.user_id
            WHERE group_members.group_id = \(groupID) AND group_members.user_id > \(cursor ?? "")
            ORDER BY group_members.user_id LIMIT \(limit)
            """, as: GroupMember.self)
    }

    public func memberIDs(groupID: String, on executor: any SQLExecutor) async throws -> Set<String> {
        Set(try await executor.all(
            "SELECT user_id FROM group_members WHERE group_id = \(groupID)", column: "user_id", as: String.self))
    }

    public func groups(userID: String, on executor: any SQLExecutor) async throws -> [UserGroup] {
        try await executor.all(
            """
            SELECT \(raw: Self.prefixedColumns) FROM group_members JOIN user_groups ON user_groups.id = group_members.group_id
            WHERE group_members.user_id = \(userID) ORDER BY user_groups.name
            """, as: UserGroup.self)
    }

    public func memberships(
        userIDs: [String], on executor: any SQLExecutor
    ) async throws -> [String: [(id: String, name: String)]] {
        var groups: [String: [(id: String, name: String)]] = [:]
        for row in try await executor.run(chunking: userIDs, { part in
            """
            SELECT group_members.user_id AS user_id, user_groups.id AS id, user_groups.name AS name
            FROM group_members JOIN user_groups ON user_groups.id = group_members.group_id
            WHERE group_members.user_id IN (\(list: part)) ORDER BY user_groups.name
            """
        }) {
            groups[try row.decode(column: "user_id", as: String.self), default: []].append(
                (try row.decode(column: "id", as: String.self), try row.decode(column: "name", as: String.self)))
        }
        return groups
    }

    public func groupNames(userIDs: [String], on executor: any SQLExecutor) async throws -> [String: [String]] {
        var names: [String: [String]] = [:]
        for row in try await executor.run(chunking: userIDs, { part in
            """
            SELECT group_members.user_id AS user_id, user_groups.name AS name
            FROM group_members JOIN user_groups ON user_groups.id = group_members.group_id
            WHERE group_members.user_id IN (\(list: part)) ORDER BY user_groups.name
            """
        }) {
            names[try row.decode(column: "user_id", as: String.self), default: []].append(
                try row.decode(column: "name", as: String.self))
        }
        return names
    }

    public func list(tenantID: String, namePrefix: String?, source: User.Source?, after cursor: String?, limit: Int,
                     on executor: any SQLExecutor) async throws -> [UserGroup] {
        let sourceName = source?.rawValue ?? ""
        // LIKE with its wildcards escaped: `_` and `%` in a name are themselves.
        let pattern = (namePrefix ?? "").lowercased().replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
        return try await executor.all(
            """
            SELECT \(raw: Self.columns) FROM user_groups
            WHERE tenant_id = \(tenantID) AND (\(sourceName) = '' OR source = \(sourceName))
                AND lower(name) LIKE \(pattern) ESCAPE '\\' AND id > \(cursor ?? "")
            ORDER BY id LIMIT \(limit)
            """, as: UserGroup.self)
    }

    public func memberCounts(groupIDs: [String], on executor: any SQLExecutor) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try await executor.run(chunking: groupIDs, { part in
            """
            SELECT group_id, COUNT(*) AS members_count FROM group_members
            WHERE group_id IN (\(list: part)) GROUP BY group_id
            """
        }) {
            counts[try row.decode(column: "group_id", as: String.self)] = try row.decode(column: "members_count", as: Int.self)
        }
        return counts
    }

    /// The names of the groups with these ids, within `tenantID` (every tenant's for nil), by id:
    /// what the audit log calls a group now.
    func names(ids: [String], tenantID: String?, on executor: any SQLExecutor) async throws -> [String: String] {
        let tenant = tenantID ?? ""
        var names: [String: String] = [:]
        for row in try await executor.run(chunking: ids, { part in
            "SELECT id, name FROM user_groups WHERE id IN (\(list: part)) AND (\(tenant) = '' OR tenant_id = \(tenant))"
        }) {
            names[try row.decode(column: "id", as: String.self)] = try row.decode(column: "name", as: String.self)
        }
        return names
    }
}
