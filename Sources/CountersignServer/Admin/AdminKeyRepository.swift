import Foundation

public protocol AdminKeyRepository: Sendable {
    func insert(_ key: AdminKey, secretHash: Data, on executor: any SQLExecutor) async throws
    /// The key and its stored hash.
    func find(id: String, on executor: any SQLExecutor) async throws -> (AdminKey, Data)?
    func list(tenantID: String?, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [AdminKey]
    /// Revokes an unrevoked key; false if it was not found or already revoked.
    func revoke(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    /// Revokes the unrevoked keys `createdBy` made before `issuedBefore`.
    func revoke(createdBy: String, issuedBefore: Date, at date: Date, on executor: any SQLExecutor) async throws
    func touch(id: String, at date: Date, on executor: any SQLExecutor) async throws
    /// Whether any key, revoked or not, was ever issued.
    func anyIssued(on executor: any SQLExecutor) async throws -> Bool
    /// Removes a key that was never shown to anyone; false if it was not found.
    func withdraw(id: String, on executor: any SQLExecutor) async throws -> Bool
}

public struct SQLAdminKeyRepository: AdminKeyRepository {
    public init() {}

    private typealias Row = AdminKeyRow

    public func insert(_ key: AdminKey, secretHash: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO admin_keys (id, tenant_id, name, secret_hash, rights, created_by, created_at)
            VALUES (\(key.id), \(key.tenantID), \(key.name), \(secretHash),
                \(key.rights.map(\.rawValue).sorted().joined(separator: " ")), \(key.createdBy), \(key.createdAt))
            """)
    }

    public func find(id: String, on executor: any SQLExecutor) async throws -> (AdminKey, Data)? {
        guard let row = try await executor.first(
            "SELECT \(raw: Row.columns) FROM admin_keys WHERE id = \(id)", as: Row.self) else { return nil }
        return (try row.key(), row.secretHash)
    }

    public func list(tenantID: String?, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [AdminKey] {
        let statement: SQLStatement = if let tenantID {
            """
            SELECT \(raw: Row.columns) FROM admin_keys
            WHERE tenant_id = \(tenantID) AND id > \(cursor ?? "") ORDER BY id LIMIT \(limit)
            """
        } else {
            """
            SELECT \(raw: Row.columns) FROM admin_keys
            WHERE tenant_id IS NULL AND id > \(cursor ?? "") ORDER BY id LIMIT \(limit)
            """
        }
        return try await executor.all(statement, as: Row.self).map { try $0.key() }
    }

    public func revoke(createdBy: String, issuedBefore: Date, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE admin_keys SET revoked_at = \(date)
            WHERE created_by = \(createdBy) AND revoked_at IS NULL AND created_at < \(issuedBefore)
            """)
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

    /// The names of the admin keys with these ids, within the tenant (any tenant's for nil); a
    /// system key (of no tenant) is named in every tenant, since it acts there.
    func names(ids: [String], tenantID: String?, on executor: any SQLExecutor) async throws -> [String: String] {
        let tenant = tenantID ?? ""
        var names: [String: String] = [:]
        for row in try await executor.run(chunking: ids, { part in
            """
            SELECT id, name FROM admin_keys
            WHERE id IN (\(list: part)) AND (\(tenant) = '' OR tenant_id = \(tenant) OR tenant_id IS NULL)
            """
        }) {
            names[try row.decode(column: "id", as: String.self)] = try row.decode(column: "name", as: String.self)
        }
        return names
    }
}

/// A row of `admin_keys` as stored: decoded by column name, then turned into an `AdminKey`
/// (the rights split from their space-separated list).
struct AdminKeyRow: Decodable {
    /// The columns `CodingKeys` names, for `SELECT`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    /// NULL for a system key.
    var tenantID: String?
    var name: String
    /// SHA-256 of the secret.
    var secretHash: Data
    /// `AdminRight` values, separated by spaces.
    var rights: String
    var createdBy: String?
    var createdAt: Date
    var lastUsedAt: Date?
    var revokedAt: Date?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case name
        case secretHash = "secret_hash"
        case rights
        case createdBy = "created_by"
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case revokedAt = "revoked_at"
    }

    /// The key. A right the code does not know is `StorageError.corrupt`, never read as no right.
    func key() throws(StorageError) -> AdminKey {
        AdminKey(
            id: id, tenantID: tenantID, name: name,
            rights: try rights.split(separator: " ").map { (word) throws(StorageError) -> AdminRight in
                guard let right = AdminRight(rawValue: String(word)) else {
                    throw .corrupt("column rights holds no AdminRight")
                }
                return right
            },
            createdBy: createdBy, createdAt: createdAt, lastUsedAt: lastUsedAt, revokedAt: revokedAt)
    }
}
