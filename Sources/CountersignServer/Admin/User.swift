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

public protocol UserRepository: Sendable {
    func insert(_ user: User, on executor: any SQLExecutor) async throws
    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> User?
    func find(username: String, tenantID: String, on executor: any SQLExecutor) async throws -> User?
    func list(tenantID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [User]
    func update(_ user: User, on executor: any SQLExecutor) async throws
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

public struct SQLUserRepository: UserRepository {
    public init() {}

    private static let columns = """
        id, tenant_id, username, display_name, status, created_at, updated_at, requests_suppressed_until, totp_locked_until,
        CASE WHEN user_code_hash IS NULL THEN 0 ELSE 1 END AS has_user_code, user_code_locked_until
        """

    public func insert(_ user: User, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO users (id, tenant_id, username, display_name, status, created_at, updated_at)
            VALUES (\(user.id), \(user.tenantID), \(user.username), \(user.displayName), \(user.status.rawValue), \(user.createdAt), \(user.updatedAt))
            """)
    }

    public func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> User? {
        try await executor.run(
            "SELECT \(raw: Self.columns) FROM users WHERE id = \(id) AND tenant_id = \(tenantID)").first.map(Self.decode)
    }

    public func find(username: String, tenantID: String, on executor: any SQLExecutor) async throws -> User? {
        try await executor.run(
            "SELECT \(raw: Self.columns) FROM users WHERE username = \(username) AND tenant_id = \(tenantID)").first.map(Self.decode)
    }

    public func list(tenantID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [User] {
        try await executor.run(
            "SELECT \(raw: Self.columns) FROM users WHERE tenant_id = \(tenantID) AND id > \(cursor ?? "") ORDER BY id LIMIT \(Int64(limit))").map(Self.decode)
    }

    public func update(_ user: User, on executor: any SQLExecutor) async throws {
        try await executor.run(
            "UPDATE users SET username = \(user.username), display_name = \(user.displayName), status = \(user.status.rawValue), updated_at = \(user.updatedAt) WHERE id = \(user.id)")
    }

    public func delete(id: String, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM users WHERE id = \(id)")
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
        guard let row = try await executor.run(
            "UPDATE users SET totp_failures = totp_failures + 1 WHERE id = \(userID) RETURNING totp_failures").first, try row.int("totp_failures") >= Int64(limit) else { return nil }
        try await executor.run(
            "UPDATE users SET totp_failures = 0, totp_locked_until = \(lockUntil) WHERE id = \(userID)")
        return lockUntil
    }

    public func resetTOTPFailures(userID: String, on executor: any SQLExecutor) async throws {
        try await executor.run("UPDATE users SET totp_failures = 0 WHERE id = \(userID) AND totp_failures <> 0")
    }

    static func decode(_ row: SQLRow) throws -> User {
        User(
            id: try row.string("id"), tenantID: try row.string("tenant_id"), username: try row.string("username"),
            displayName: try row.optionalString("display_name"),
            status: try row.string("status", as: User.Status.self),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"),
            requestsSuppressedUntil: try row.optionalDate("requests_suppressed_until"),
            totpLockedUntil: try row.optionalDate("totp_locked_until"), hasUserCode: try row.bool("has_user_code"),
            userCodeLockedUntil: try row.optionalDate("user_code_locked_until"))
    }
}
