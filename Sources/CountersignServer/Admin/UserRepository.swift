import Foundation

public protocol UserRepository: Sendable {
    func insert(_ user: User, on executor: any SQLExecutor) async throws
    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> User?
    func find(username: String, tenantID: String, on executor: any SQLExecutor) async throws -> User?
    /// The user whose id is `hint`, or failing that whose username is: one statement.
    func find(idOrUsername hint: String, tenantID: String, on executor: any SQLExecutor) async throws -> User?
    func list(tenantID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [User]
    /// The users whose username starts with `prefix`, any case, in the order of `list`.
    func list(tenantID: String, usernamePrefix prefix: String, after cursor: String?, limit: Int,
              on executor: any SQLExecutor) async throws -> [User]
    /// The usernames of the users with these ids that exist, by id.
    func usernames(ids: [String], on executor: any SQLExecutor) async throws -> [String: String]
    func update(_ user: User, on executor: any SQLExecutor) async throws
    /// The tenant's users with this SCIM `externalId`, in id order (it need not be unique).
    func list(tenantID: String, externalID: String, limit: Int, on executor: any SQLExecutor) async throws -> [User]
    /// The tenant's users whose e-mail address is `email`, any case, in id order.
    func list(tenantID: String, email: String, limit: Int, on executor: any SQLExecutor) async throws -> [User]
    /// The tenant's users kept by `source` after `cursor`, by id.
    func list(tenantID: String, source: User.Source, after cursor: String?, limit: Int,
              on executor: any SQLExecutor) async throws -> [User]
    /// The user of `source` with that stable id (a directory's `entryUUID` or `objectGUID`).
    func find(sourceID: String, source: User.Source, tenantID: String, on executor: any SQLExecutor) async throws -> User?
    /// The tenant's users that a SCIM client sees (not deprovisioned) matching `match` (all
    /// when nil), by id, `offset` of them skipped; and how many match in all.
    func list(tenantID: String, matching match: UserMatch?, offset: Int, limit: Int,
              on executor: any SQLExecutor) async throws -> (total: Int, users: [User])
    /// The user's SCIM attributes beyond Countersign's own fields (names, every e-mail), as the
    /// client sent them (JSON), if any.
    func scimProfile(userID: String, on executor: any SQLExecutor) async throws -> String?
    /// The SCIM profiles of those of `userIDs` that have one, by user id: one query per thousand users.
    func scimProfiles(userIDs: [String], on executor: any SQLExecutor) async throws -> [String: String]
    func setSCIMProfile(userID: String, _ profile: String?, on executor: any SQLExecutor) async throws
    /// How many users the tenant has, and how many of them are active.
    func count(tenantID: String, on executor: any SQLExecutor) async throws -> (all: Int, active: Int)
    func delete(id: String, on executor: any SQLExecutor) async throws
    /// Refuses new requests for the user until `date`.
    func suppressRequests(userID: String, until date: Date, on executor: any SQLExecutor) async throws
    func liftSuppression(userID: String, on executor: any SQLExecutor) async throws
    /// Locks the user's row until the transaction ends (PostgreSQL; SQLite's write lock already
    /// serialises), so that counting their recent requests and adding one cannot interleave.
    func lockForRequest(userID: String, on executor: any SQLExecutor) async throws
    /// Counts a wrong TOTP code; at `limit` in a row TOTP is locked until `lockUntil`. Returns
    /// the lock's end when this failure set it.
    func recordTOTPFailure(userID: String, limit: Int, lockUntil: Date, on executor: any SQLExecutor) async throws -> Date?
    func resetTOTPFailures(userID: String, on executor: any SQLExecutor) async throws
}

/// What a SCIM filter may ask of users (`SQLUserRepository.list(tenantID:matching:…)`).
public enum UserMatch: Sendable, Equatable {
    case id(String)
    /// Any case: SCIM's userName is not case-exact.
    case username(String)
    case externalID(String)
    /// Any case.
    case email(String)
    /// Any case.
    case displayName(String)
}

public struct SQLUserRepository: UserRepository {
    /// The condition that `userID` is an active user, for a statement of another table that must
    /// act only while the user is active, in the same statement (no window in which a user
    /// disabled after a separate check still gets through): interpolated as `\(condition)`.
    static func isActive(_ userID: String) -> SQLStatement {
        "EXISTS (SELECT 1 FROM users WHERE users.id = \(userID) AND users.status = \(User.Status.active))"
    }

    public init() {}

    private typealias Row = UserRow

    public func insert(_ user: User, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO users (id, tenant_id, username, display_name, status, email, external_id, source, source_id,
                disabled_by_source, deprovisioned_at, created_at, updated_at)
            VALUES (\(user.id), \(user.tenantID), \(user.username), \(user.displayName), \(user.status), \(user.email),
                \(user.externalID), \(user.source), \(user.sourceID), \(user.disabledBySource), \(user.deprovisionedAt),
                \(user.createdAt), \(user.updatedAt))
            """)
    }

    public func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> User? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM users WHERE id = \(id) AND tenant_id = \(tenantID)", as: Row.self
        )?.user()
    }

    public func find(username: String, tenantID: String, on executor: any SQLExecutor) async throws -> User? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM users WHERE username = \(username) AND tenant_id = \(tenantID)",
            as: Row.self
        )?.user()
    }

    public func find(idOrUsername hint: String, tenantID: String, on executor: any SQLExecutor) async throws -> User? {
        try await executor.first(
            """
            SELECT \(raw: Row.columns) FROM users
            WHERE tenant_id = \(tenantID) AND (id = \(hint) OR username = \(hint))
            ORDER BY CASE WHEN id = \(hint) THEN 0 ELSE 1 END LIMIT 1
            """, as: Row.self
        )?.user()
    }

    public func list(tenantID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [User] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM users
            WHERE tenant_id = \(tenantID) AND id > \(cursor ?? "") ORDER BY id LIMIT \(limit)
            """, as: Row.self
        ).map { $0.user() }
    }

    public func list(tenantID: String, usernamePrefix prefix: String, after cursor: String?, limit: Int,
                     on executor: any SQLExecutor) async throws -> [User] {
        // LIKE with its wildcards escaped: `_` and `%` in a username are themselves.
        let pattern = prefix.lowercased().replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
        return try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM users
            WHERE tenant_id = \(tenantID) AND lower(username) LIKE \(pattern) ESCAPE '\\' AND id > \(cursor ?? "")
            ORDER BY id LIMIT \(limit)
            """, as: Row.self
        ).map { $0.user() }
    }

    public func usernames(ids: [String], on executor: any SQLExecutor) async throws -> [String: String] {
        let rows = try await executor.run(chunking: ids) { part in "SELECT id, username FROM users WHERE id IN (\(list: part))" }
        var names: [String: String] = [:]
        for row in rows {
            names[try row.decode(column: "id", as: String.self)] = try row.decode(column: "username", as: String.self)
        }
        return names
    }

    public func update(_ user: User, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE users SET username = \(user.username), display_name = \(user.displayName), status = \(user.status),
                email = \(user.email), external_id = \(user.externalID), source = \(user.source),
                source_id = \(user.sourceID), disabled_by_source = \(user.disabledBySource),
                deprovisioned_at = \(user.deprovisionedAt), updated_at = \(user.updatedAt)
            WHERE id = \(user.id)
            """)
        // A user who is not active forgets the browsers they had remembered, for good.
        if user.status != .active { try await SQLRememberedBrowserRepository().deleteAll(userID: user.id, on: executor) }
    }

    public func list(tenantID: String, externalID: String, limit: Int, on executor: any SQLExecutor) async throws -> [User] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM users
            WHERE tenant_id = \(tenantID) AND external_id = \(externalID) ORDER BY id LIMIT \(limit)
            """, as: Row.self
        ).map { $0.user() }
    }

    public func list(tenantID: String, email: String, limit: Int, on executor: any SQLExecutor) async throws -> [User] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM users
            WHERE tenant_id = \(tenantID) AND lower(email) = \(email.lowercased()) ORDER BY id LIMIT \(limit)
            """, as: Row.self
        ).map { $0.user() }
    }

    public func list(tenantID: String, source: User.Source, after cursor: String?, limit: Int,
                     on executor: any SQLExecutor) async throws -> [User] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM users
            WHERE tenant_id = \(tenantID) AND source = \(source) AND id > \(cursor ?? "") ORDER BY id LIMIT \(limit)
            """, as: Row.self
        ).map { $0.user() }
    }

    public func find(sourceID: String, source: User.Source, tenantID: String,
                     on executor: any SQLExecutor) async throws -> User? {
        try await executor.first(
            """
            SELECT \(raw: Row.columns) FROM users
            WHERE tenant_id = \(tenantID) AND source = \(source) AND source_id = \(sourceID)
            """, as: Row.self
        )?.user()
    }

    public func list(tenantID: String, matching match: UserMatch?, offset: Int, limit: Int,
                     on executor: any SQLExecutor) async throws -> (total: Int, users: [User]) {
        let condition: SQLStatement = switch match {
        case nil: "1 = 1"
        case .id(let id): "id = \(id)"
        case .username(let name): "lower(username) = \(name.lowercased())"
        case .externalID(let id): "external_id = \(id)"
        case .email(let address): "lower(email) = \(address.lowercased())"
        case .displayName(let name): "lower(display_name) = \(name.lowercased())"
        }
        let total = try await executor.first(
            """
            SELECT COUNT(*) AS matching FROM users
            WHERE tenant_id = \(tenantID) AND deprovisioned_at IS NULL AND \(condition)
            """, column: "matching", as: Int.self) ?? 0
        let users = try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM users
            WHERE tenant_id = \(tenantID) AND deprovisioned_at IS NULL AND \(condition)
            ORDER BY id LIMIT \(limit) OFFSET \(offset)
            """, as: Row.self
        ).map { $0.user() }
        return (total, users)
    }

    public func scimProfile(userID: String, on executor: any SQLExecutor) async throws -> String? {
        try await executor.first(
            "SELECT scim_profile FROM users WHERE id = \(userID)", column: "scim_profile", as: String?.self) ?? nil
    }

    public func scimProfiles(userIDs: [String], on executor: any SQLExecutor) async throws -> [String: String] {
        var profiles: [String: String] = [:]
        for row in try await executor.run(chunking: userIDs, { part in
            "SELECT id, scim_profile FROM users WHERE id IN (\(list: part)) AND scim_profile IS NOT NULL"
        }) {
            profiles[try row.decode(column: "id", as: String.self)] = try row.decode(column: "scim_profile", as: String.self)
        }
        return profiles
    }

    public func setSCIMProfile(userID: String, _ profile: String?, on executor: any SQLExecutor) async throws {
        try await executor.run("UPDATE users SET scim_profile = \(profile) WHERE id = \(userID)")
    }

    public func count(tenantID: String, on executor: any SQLExecutor) async throws -> (all: Int, active: Int) {
        struct Counts: Decodable { var users: Int; var active: Int }
        let counts = try await executor.first(
            """
            SELECT COUNT(*) AS users, COALESCE(SUM(CASE WHEN status = \(User.Status.active) THEN 1 ELSE 0 END), 0) AS active
            FROM users WHERE tenant_id = \(tenantID)
            """, as: Counts.self)
        return (counts?.users ?? 0, counts?.active ?? 0)
    }

    public func delete(id: String, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM users WHERE id = \(id)")
        try await SQLRememberedBrowserRepository().deleteAll(userID: id, on: executor)
    }

    public func suppressRequests(userID: String, until date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE users SET requests_suppressed_until = \(date)
            WHERE id = \(userID) AND (requests_suppressed_until IS NULL OR requests_suppressed_until < \(date))
            """)
    }

    public func liftSuppression(userID: String, on executor: any SQLExecutor) async throws {
        try await executor.run("UPDATE users SET requests_suppressed_until = NULL WHERE id = \(userID)")
    }

    public func lockForRequest(userID: String, on executor: any SQLExecutor) async throws {
        if executor.dialect == .postgres {
            try await executor.run("SELECT id FROM users WHERE id = \(userID) FOR UPDATE")
        }
    }

    public func recordTOTPFailure(userID: String, limit: Int, lockUntil: Date, on executor: any SQLExecutor) async throws -> Date? {
        guard let failures = try await executor.first(
            "UPDATE users SET totp_failures = totp_failures + 1 WHERE id = \(userID) RETURNING totp_failures",
            column: "totp_failures", as: Int.self), failures >= limit else { return nil }
        try await executor.run(
            "UPDATE users SET totp_failures = 0, totp_locked_until = \(lockUntil) WHERE id = \(userID)")
        return lockUntil
    }

    public func resetTOTPFailures(userID: String, on executor: any SQLExecutor) async throws {
        try await executor.run("UPDATE users SET totp_failures = 0 WHERE id = \(userID) AND totp_failures <> 0")
    }

    /// The usernames of the users with these ids, within the tenant (any tenant's for nil).
    func usernames(ids: [String], tenantID: String?, on executor: any SQLExecutor) async throws -> [String: String] {
        let tenant = tenantID ?? ""
        var names: [String: String] = [:]
        for row in try await executor.run(chunking: ids, { part in
            "SELECT id, username FROM users WHERE id IN (\(list: part)) AND (\(tenant) = '' OR tenant_id = \(tenant))"
        }) {
            names[try row.decode(column: "id", as: String.self)] = try row.decode(column: "username", as: String.self)
        }
        return names
    }
}

/// A row of `users` as stored, decoded by column name, then turned into a `User`. The code's
/// hash is never read here: only whether there is one.
struct UserRow: Decodable {
    /// What `SELECT` reads for `CodingKeys`: the columns, and for `has_user_code` whether
    /// `user_code_hash` is set.
    static let columns = CodingKeys.allCases.map { key in
        key == .hasUserCode ? "CASE WHEN user_code_hash IS NULL THEN 0 ELSE 1 END AS \(key.rawValue)" : key.rawValue
    }.joined(separator: ", ")

    var id: String
    var tenantID: String
    var username: String
    var displayName: String?
    var status: User.Status
    var email: String?
    var externalID: String?
    var source: User.Source
    var sourceID: String?
    var disabledBySource: Bool
    var deprovisionedAt: Date?
    var createdAt: Date
    var updatedAt: Date
    var requestsSuppressedUntil: Date?
    var totpLockedUntil: Date?
    var hasUserCode: Bool
    var userCodeLockedUntil: Date?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case username
        case displayName = "display_name"
        case status
        case email
        case externalID = "external_id"
        case source
        case sourceID = "source_id"
        case disabledBySource = "disabled_by_source"
        case deprovisionedAt = "deprovisioned_at"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case requestsSuppressedUntil = "requests_suppressed_until"
        case totpLockedUntil = "totp_locked_until"
        case hasUserCode = "has_user_code"
        case userCodeLockedUntil = "user_code_locked_until"
    }

    func user() -> User {
        User(
            id: id, tenantID: tenantID, username: username, displayName: displayName, status: status,
            email: email, externalID: externalID, source: source, sourceID: sourceID,
            disabledBySource: disabledBySource, deprovisionedAt: deprovisionedAt, createdAt: createdAt, updatedAt: updatedAt, requestsSuppressedUntil: requestsSuppressedUntil,
            totpLockedUntil: totpLockedUntil, hasUserCode: hasUserCode, userCodeLockedUntil: userCodeLockedUntil)
    }
}
