import CountersignCore
import Foundation

/// A tenant: its own OpenID issuer and device-protocol key, served below `/t/<slug>` (and at
/// the root for the default tenant).
public struct Tenant: Sendable, Equatable {
    public var id: String
    public var slug: String
    public var displayName: String
    public var isDefault: Bool
    /// The public half of the tenant's device-protocol signing key.
    public var signingKey: ECPublicJWK
    public var createdAt: Date
    public var updatedAt: Date
    /// How the tenant's users approve (`AuthenticationPolicy`).
    public var policy = AuthenticationPolicy()
    /// The authorization detail types (RFC 9396) its clients may be registered for.
    public var authorizationDetailTypes = AuthorizationDetailTypes.none
}

/// A tenant slug: lower-case letters, digits and hyphens, 2–40 characters, starting with a
/// letter — safe in a URL path and unambiguous.
public struct TenantSlug: Sendable, Hashable, CustomStringConvertible {
    public let value: String
    public var description: String { value }

    public init(_ raw: String) throws(AdminError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-")
        guard (2...40).contains(raw.count), raw.first?.isLetter == true, raw.allSatisfy({ allowed.contains($0) }),
              !raw.hasSuffix("-") else {
            throw .invalidField("slug", "2 to 40 lower-case letters, digits and hyphens, starting with a letter")
        }
        value = raw
    }
}

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

    private static let columns = """
        id, slug, display_name, is_default, signing_key_jwk, created_at, updated_at, authentication_policy,
        authorization_detail_types
        """

    public func insert(_ tenant: Tenant, sealedSigningKey: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO tenants (id, slug, display_name, is_default, signing_key_sealed, signing_key_jwk, created_at, updated_at)
            VALUES (\(tenant.id), \(tenant.slug), \(tenant.displayName), \(tenant.isDefault), \(sealedSigningKey), \(try JSONValue(encoding: tenant.signingKey).canonicalString), \(tenant.createdAt), \(tenant.updatedAt))
            """)
    }

    public func find(slug: String, on executor: any SQLExecutor) async throws -> Tenant? {
        try await executor.run("SELECT \(raw: Self.columns) FROM tenants WHERE slug = \(slug)").first.map(Self.decode)
    }

    public func find(id: String, on executor: any SQLExecutor) async throws -> Tenant? {
        try await executor.run("SELECT \(raw: Self.columns) FROM tenants WHERE id = \(id)").first.map(Self.decode)
    }

    public func defaultTenant(on executor: any SQLExecutor) async throws -> Tenant? {
        try await executor.run("SELECT \(raw: Self.columns) FROM tenants WHERE is_default = 1").first.map(Self.decode)
    }

    public func sealedSigningKey(tenantID: String, on executor: any SQLExecutor) async throws -> Data? {
        try await executor.run("SELECT signing_key_sealed FROM tenants WHERE id = \(tenantID)").first?
            .data("signing_key_sealed")
    }

    public func list(after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [Tenant] {
        try await executor.run(
            "SELECT \(raw: Self.columns) FROM tenants WHERE id > \(cursor ?? "") ORDER BY id LIMIT \(Int64(limit))").map(Self.decode)
    }

    public func update(_ tenant: Tenant, on executor: any SQLExecutor) async throws {
        try await executor.run(
            "UPDATE tenants SET display_name = \(tenant.displayName), updated_at = \(tenant.updatedAt) WHERE id = \(tenant.id)")
    }

    public func setPolicy(tenantID: String, _ policy: AuthenticationPolicy, at date: Date,
                          on executor: any SQLExecutor) async throws {
        try await executor.run(
            "UPDATE tenants SET authentication_policy = \(try JSONValue(encoding: policy).canonicalString), updated_at = \(date) WHERE id = \(tenantID)")
    }

    public func setAuthorizationDetailTypes(tenantID: String, _ types: AuthorizationDetailTypes, at date: Date,
                                            on executor: any SQLExecutor) async throws {
        try await executor.run(
            "UPDATE tenants SET authorization_detail_types = \(types.types.isEmpty ? .null : .text(types.schema.canonicalString)), updated_at = \(date) WHERE id = \(tenantID)")
    }

    public func delete(id: String, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM tenants WHERE id = \(id)")
    }

    static func decode(_ row: SQLRow) throws -> Tenant {
        let jwkText = try row.string("signing_key_jwk")
        let policy = try row.optionalString("authentication_policy").map {
            try JSONDecoder().decode(AuthenticationPolicy.self, from: Data($0.utf8))
        } ?? AuthenticationPolicy()
        let types = try row.optionalString("authorization_detail_types").map(decodeTypes) ?? .none
        return Tenant(
            id: try row.string("id"), slug: try row.string("slug"), displayName: try row.string("display_name"),
            isDefault: try row.bool("is_default"),
            signingKey: try JSONDecoder().decode(ECPublicJWK.self, from: Data(jwkText.utf8)),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"), policy: policy,
            authorizationDetailTypes: types)
    }

    /// The registry was checked when it was set; one that no longer parses means the row was altered.
    private static func decodeTypes(_ text: String) throws -> AuthorizationDetailTypes {
        do { return try AuthorizationDetailTypes(schema: try JSONValue(parsing: Data(text.utf8))) } catch {
            throw StorageError.corrupt("tenants.authorization_detail_types")
        }
    }
}
