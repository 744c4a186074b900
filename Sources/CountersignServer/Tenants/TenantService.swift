import CountersignCore
import Crypto
import Foundation

/// Creates tenants and hands out their device-protocol signing keys.
public struct TenantService: Sendable {
    let database: any Database
    let tenants: any TenantRepository
    let sealer: SecretSealer
    let audit: AuditLog

    /// Creates a tenant with a fresh P-256 signing key, sealed under the master key.
    public func create(slug: TenantSlug, displayName: String, isDefault: Bool, actor: String, at date: Date,
                       on executor: any SQLExecutor) async throws -> Tenant {
        let id = Identifier.make("ten", at: date)
        let key = P256.Signing.PrivateKey()
        let tenant = Tenant(id: id, slug: slug.value, displayName: displayName, isDefault: isDefault,
                            signingKey: ECPublicJWK(key.publicKey), createdAt: date, updatedAt: date)
        let sealed = try sealer.seal(key.rawRepresentation, context: Self.keyContext(id))
        do {
            try await tenants.insert(tenant, sealedSigningKey: sealed, on: executor)
        } catch StorageError.uniqueViolation {
            throw AdminError.conflict("a tenant with slug \(slug.value) already exists")
        }
        try await audit.record("tenant.created", actor: actor, tenantID: id, target: ("tenant", id),
                               details: ["slug": slug.value], at: date, on: executor)
        return tenant
    }

    /// The tenant's private device-protocol key.
    public func signingKey(for tenant: Tenant) async throws -> P256.Signing.PrivateKey {
        guard let sealed = try await tenants.sealedSigningKey(tenantID: tenant.id, on: database) else {
            throw StorageError.corrupt("tenant \(tenant.id) has no signing key")
        }
        let raw = try sealer.open(sealed, context: Self.keyContext(tenant.id))
        return try P256.Signing.PrivateKey(rawRepresentation: raw)
    }

    /// Resolves the tenant of a request path: a slug, or the default tenant for nil.
    public func resolve(slug: String?) async throws -> Tenant? {
        if let slug { return try await tenants.find(slug: slug, on: database) }
        return try await tenants.defaultTenant(on: database)
    }

    static func keyContext(_ tenantID: String) -> String { "tenant-signing-key:\(tenantID)" }
}
