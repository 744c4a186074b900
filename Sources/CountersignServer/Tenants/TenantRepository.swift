import CountersignCore
import Foundation

/// The storage a tenant needs.
public protocol TenantRepository: Sendable {
    func insert(_ tenant: Tenant, sealedSigningKey: Data, on executor: any SQLExecutor) async throws
    func find(slug: String, on executor: any SQLExecutor) async throws -> Tenant?
    func find(id: String, on executor: any SQLExecutor) async throws -> Tenant?
    func defaultTenant(on executor: any SQLExecutor) async throws -> Tenant?
    func sealedSigningKey(tenantID: String, on executor: any SQLExecutor) async throws -> Data?
    func list(after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [Tenant]
    func update(_ tenant: Tenant, on executor: any SQLExecutor) async throws
    func setPolicy(tenantID: String, _ policy: AuthenticationPolicy, at date: Date, on executor: any SQLExecutor) async throws
    func setAuthorizationDetailTypes(tenantID: String, _ types: AuthorizationDetailTypes, at date: Date,
                                     on executor: any SQLExecutor) async throws
    func delete(id: String, on executor: any SQLExecutor) async throws
}

public struct SQLTenantRepository: TenantRepository {
    public init() {}

    private typealias Row = TenantRow

    public func insert(_ tenant: Tenant, sealedSigningKey: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO tenants (id, slug, display_name, is_default, signing_key_sealed, signing_key_jwk, created_at,
                updated_at)
            VALUES (\(tenant.id), \(tenant.slug), \(tenant.displayName), \(tenant.isDefault), \(sealedSigningKey),
                \(try JSONValue(encoding: tenant.signingKey).canonicalString), \(tenant.createdAt), \(tenant.updatedAt))
            """)
    }

    public func find(slug: String, on executor: any SQLExecutor) async throws -> Tenant? {
        try await executor.first("SELECT \(raw: Row.columns) FROM tenants WHERE slug = \(slug)", as: Row.self)?.tenant()
    }

    public func find(id: String, on executor: any SQLExecutor) async throws -> Tenant? {
        try await executor.first("SELECT \(raw: Row.columns) FROM tenants WHERE id = \(id)", as: Row.self)?.tenant()
    }

    public func defaultTenant(on executor: any SQLExecutor) async throws -> Tenant? {
        try await executor.first("SELECT \(raw: Row.columns) FROM tenants WHERE is_default = 1", as: Row.self)?.tenant()
    }

    public func sealedSigningKey(tenantID: String, on executor: any SQLExecutor) async throws -> Data? {
        try await executor.first(
            "SELECT signing_key_sealed FROM tenants WHERE id = \(tenantID)", column: "signing_key_sealed",
            as: Data.self)
    }

    public func list(after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [Tenant] {
        try await executor.all(
            "SELECT \(raw: Row.columns) FROM tenants WHERE id > \(cursor ?? "") ORDER BY id LIMIT \(limit)",
            as: Row.self
        ).map { try $0.tenant() }
    }

    public func update(_ tenant: Tenant, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE tenants SET display_name = \(tenant.displayName), updated_at = \(tenant.updatedAt)
            WHERE id = \(tenant.id)
            """)
    }

    public func setPolicy(tenantID: String, _ policy: AuthenticationPolicy, at date: Date,
                          on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE tenants SET authentication_policy = \(try JSONValue(encoding: policy).canonicalString),
                updated_at = \(date)
            WHERE id = \(tenantID)
            """)
    }

    public func setAuthorizationDetailTypes(tenantID: String, _ types: AuthorizationDetailTypes, at date: Date,
                                            on executor: any SQLExecutor) async throws {
        // No types is NULL, as for a tenant that never set any.
        let schema: String? = types.types.isEmpty ? nil : types.schema.canonicalString
        try await executor.run(
            "UPDATE tenants SET authorization_detail_types = \(schema), updated_at = \(date) WHERE id = \(tenantID)")
    }

    public func delete(id: String, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM tenants WHERE id = \(id)")
    }
}

/// A row of `tenants` as stored: decoded by column name, then turned into a `Tenant` (its JSON
/// columns parsed). The sealed signing key is not among its columns.
struct TenantRow: Decodable {
    /// The columns `CodingKeys` names, for `SELECT`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var slug: String
    var displayName: String
    var isDefault: Bool
    /// The public signing key as JSON (`ECPublicJWK`).
    var signingKeyJWK: String
    var createdAt: Date
    var updatedAt: Date
    /// JSON (`AuthenticationPolicy`); NULL: the defaults.
    var authenticationPolicy: String?
    /// The registry's JSON schema (`AuthorizationDetailTypes`); NULL: none.
    var authorizationDetailTypes: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, slug
        case displayName = "display_name"
        case isDefault = "is_default"
        case signingKeyJWK = "signing_key_jwk"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case authenticationPolicy = "authentication_policy"
        case authorizationDetailTypes = "authorization_detail_types"
    }

    func tenant() throws -> Tenant {
        let policy = try authenticationPolicy.map {
            try JSONDecoder().decode(AuthenticationPolicy.self, from: Data($0.utf8))
        } ?? AuthenticationPolicy()
        let types = try authorizationDetailTypes.map(Self.detailTypes) ?? .none
        return Tenant(
            id: id, slug: slug, displayName: displayName, isDefault: isDefault,
            signingKey: try JSONDecoder().decode(ECPublicJWK.self, from: Data(signingKeyJWK.utf8)),
            createdAt: createdAt, updatedAt: updatedAt, policy: policy, authorizationDetailTypes: types)
    }

    /// The registry was checked when it was set; one that no longer parses means the row was altered.
    private static func detailTypes(_ text: String) throws(StorageError) -> AuthorizationDetailTypes {
        do { return try AuthorizationDetailTypes(schema: try JSONValue(parsing: Data(text.utf8))) } catch {
            throw .corrupt("tenants.authorization_detail_types")
        }
    }
}
