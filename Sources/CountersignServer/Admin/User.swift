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

    enum CodingKeys: String, CodingKey {
        case id, username, status
        case tenantID = "tenant_id"
        case displayName = "display_name"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}

public protocol UserRepository: Sendable {
    func insert(_ user: User, on executor: any SQLExecutor) async throws
    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> User?
    func find(username: String, tenantID: String, on executor: any SQLExecutor) async throws -> User?
    func list(tenantID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [User]
    func update(_ user: User, on executor: any SQLExecutor) async throws
    func delete(id: String, on executor: any SQLExecutor) async throws
}

public struct SQLUserRepository: UserRepository {
    public init() {}

    private static let columns = "id, tenant_id, username, display_name, status, created_at, updated_at"

    public func insert(_ user: User, on executor: any SQLExecutor) async throws {
        try await executor.query(
            """
            INSERT INTO users (id, tenant_id, username, display_name, status, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            .text(user.id), .text(user.tenantID), .text(user.username), SQLValue(user.displayName),
            .text(user.status.rawValue), SQLValue(user.createdAt), SQLValue(user.updatedAt))
    }

    public func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> User? {
        try await executor.first(
            "SELECT \(Self.columns) FROM users WHERE id = ? AND tenant_id = ?", .text(id), .text(tenantID)
        ).map(Self.decode)
    }

    public func find(username: String, tenantID: String, on executor: any SQLExecutor) async throws -> User? {
        try await executor.first(
            "SELECT \(Self.columns) FROM users WHERE username = ? AND tenant_id = ?", .text(username), .text(tenantID)
        ).map(Self.decode)
    }

    public func list(tenantID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [User] {
        try await executor.query(
            "SELECT \(Self.columns) FROM users WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?",
            [.text(tenantID), .text(cursor ?? ""), .integer(Int64(limit))]
        ).map(Self.decode)
    }

    public func update(_ user: User, on executor: any SQLExecutor) async throws {
        try await executor.query(
            "UPDATE users SET username = ?, display_name = ?, status = ?, updated_at = ? WHERE id = ?",
            .text(user.username), SQLValue(user.displayName), .text(user.status.rawValue), SQLValue(user.updatedAt),
            .text(user.id))
    }

    public func delete(id: String, on executor: any SQLExecutor) async throws {
        try await executor.query("DELETE FROM users WHERE id = ?", .text(id))
    }

    static func decode(_ row: SQLRow) throws -> User {
        User(
            id: try row.string("id"), tenantID: try row.string("tenant_id"), username: try row.string("username"),
            displayName: try row.optionalString("display_name"),
            status: User.Status(rawValue: try row.string("status")) ?? .disabled,
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"))
    }
}
