import CountersignCore
import Crypto
import Foundation
import Synchronization

/// Creates tenants and hands out their device-protocol signing keys.
public struct TenantService: Sendable {
    let store: any TenantStore
    let sealer: SecretSealer
    /// Every device and relying-party request resolves its tenant first; tenants change rarely.
    let cache = TenantCache()

    /// Creates a tenant with a fresh P-256 signing key, sealed under the master key, on the
    /// transaction of `executor` (the caller's: the first start's, or the admin API's).
    public func create(slug: TenantSlug, displayName: String, isDefault: Bool, actor: String, at date: Date,
                       on executor: any SQLExecutor) async throws -> Tenant {
        let id = Identifier.make("ten", at: date)
        let key = P256.Signing.PrivateKey()
        let tenant = Tenant(id: id, slug: slug.value, displayName: displayName, isDefault: isDefault,
                            signingKey: ECPublicJWK(key.publicKey), createdAt: date, updatedAt: date)
        let sealed = try sealer.seal(key.rawRepresentation, context: Self.keyContext(id))
        do {
            try await store.recordCreated(tenant, sealedSigningKey: sealed, actor: actor, on: executor)
        } catch StorageError.uniqueViolation {
            throw AdminError.conflict("a tenant with slug \(slug.value) already exists")
        }
        return tenant
    }

    /// The tenant's private device-protocol key.
    public func signingKey(for tenant: Tenant) async throws -> P256.Signing.PrivateKey {
        guard let sealed = try await store.sealedSigningKey(tenantID: tenant.id) else {
            throw StorageError.corrupt("tenant \(tenant.id) has no signing key")
        }
        let raw = try sealer.open(sealed, context: Self.keyContext(tenant.id))
        return try P256.Signing.PrivateKey(rawRepresentation: raw)
    }

    /// The tenant an administration path names: by its slug, or by its id (`ten_…`, which no
    /// slug can be: a slug has no underscore). A client that read a tenant's `id` from an
    /// answer can use it where the path takes `{tenant}`.
    public func resolve(adminPath name: String) async throws -> Tenant? {
        name.hasPrefix("ten_") ? try await store.tenant(id: name) : try await resolve(slug: name)
    }

    /// Resolves the tenant of a request path: a slug, or the default tenant for nil. Answers
    /// from memory for up to `TenantCache.lifetime`; a change made through this node is seen at
    /// once (`forget()`), one made through another node within that time.
    public func resolve(slug: String?) async throws -> Tenant? {
        if let cached = cache.tenant(slug: slug) { return cached }
        let tenant = if let slug {
            try await store.tenant(slug: slug)
        } else {
            try await store.defaultTenant()
        }
        if let tenant { cache.remember(tenant, slug: slug) }
        return tenant
    }

    /// Drops every remembered tenant, after a tenant was renamed or deleted.
    public func forget() {
        cache.clear()
    }

    static func keyContext(_ tenantID: String) -> String { "tenant-signing-key:\(tenantID)" }
}

/// Tenants recently resolved, by slug (`nil`: the default tenant), each for a few seconds.
final class TenantCache: Sendable {
    static let lifetime: Duration = .seconds(5)
    private let entries = Mutex<[String?: (tenant: Tenant, until: ContinuousClock.Instant)]>([:])

    func tenant(slug: String?) -> Tenant? {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            guard let entry = entries[slug], entry.until > now else { return nil }
            return entry.tenant
        }
    }

    func remember(_ tenant: Tenant, slug: String?) {
        let until = ContinuousClock.now + Self.lifetime
        entries.withLock { entries in
            // Bounded by the number of tenants; a path naming an unknown slug is never stored.
            entries[slug] = (tenant, until)
        }
    }

    func clear() {
        entries.withLock { $0.removeAll() }
    }
}
