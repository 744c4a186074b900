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

public protocol AdminKeyRepository: Sendable {
    func insert(_ key: AdminKey, secretHash: Data, on executor: any SQLExecutor) async throws
    /// The key and its stored hash.
    func find(id: String, on executor: any SQLExecutor) async throws -> (AdminKey, Data)?
    func list(tenantID: String?, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [AdminKey]
    /// Revokes an unrevoked key; false if it was not found or already revoked.
    func revoke(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    func touch(id: String, at date: Date, on executor: any SQLExecutor) async throws
    /// Whether any key, revoked or not, was ever issued.
    func anyIssued(on executor: any SQLExecutor) async throws -> Bool
    /// Removes a key that was never shown to anyone; false if it was not found.
    func withdraw(id: String, on executor: any SQLExecutor) async throws -> Bool
}

public struct SQLAdminKeyRepository: AdminKeyRepository {
    public init() {}

    private static let columns = "id, tenant_id, name, secret_hash, rights, created_by, created_at, last_used_at, revoked_at"

    public func insert(_ key: AdminKey, secretHash: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO admin_keys (id, tenant_id, name, secret_hash, rights, created_by, created_at)
            VALUES (\(key.id), \(key.tenantID), \(key.name), \(secretHash), \(key.rights.map(\.rawValue).sorted().joined(separator: " ")), \(key.createdBy), \(key.createdAt))
            """)
    }

    public func find(id: String, on executor: any SQLExecutor) async throws -> (AdminKey, Data)? {
        guard let row = try await executor.run("SELECT \(raw: Self.columns) FROM admin_keys WHERE id = \(id)").first else {
            return nil
        }
        return (try Self.decode(row), try row.data("secret_hash"))
    }

    public func list(tenantID: String?, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [AdminKey] {
        let rows: [SQLRow]
        if let tenantID {
            rows = try await executor.run(
                "SELECT \(raw: Self.columns) FROM admin_keys WHERE tenant_id = \(tenantID) AND id > \(cursor ?? "") ORDER BY id LIMIT \(Int64(limit))")
        } else {
            rows = try await executor.run(
                "SELECT \(raw: Self.columns) FROM admin_keys WHERE tenant_id IS NULL AND id > \(cursor ?? "") ORDER BY id LIMIT \(Int64(limit))")
        }
        return try rows.map(Self.decode)
    }

    public func revoke(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            "UPDATE admin_keys SET revoked_at = \(date) WHERE id = \(id) AND revoked_at IS NULL RETURNING id")).isEmpty
    }

    public func touch(id: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("UPDATE admin_keys SET last_used_at = \(date) WHERE id = \(id)")
    }

    public func anyIssued(on executor: any SQLExecutor) async throws -> Bool {
        try await executor.run("SELECT id FROM admin_keys LIMIT 1").first != nil
    }

    public func withdraw(id: String, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run("DELETE FROM admin_keys WHERE id = \(id) RETURNING id")).isEmpty
    }

    static func decode(_ row: SQLRow) throws -> AdminKey {
        AdminKey(
            id: try row.string("id"), tenantID: try row.optionalString("tenant_id"), name: try row.string("name"),
            rights: try row.words("rights", as: AdminRight.self),
            createdBy: try row.optionalString("created_by"), createdAt: try row.date("created_at"),
            lastUsedAt: try row.optionalDate("last_used_at"), revokedAt: try row.optionalDate("revoked_at"))
    }
}
