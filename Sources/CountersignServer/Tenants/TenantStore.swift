import Foundation

/// What creating and resolving tenants (`TenantService`) reads and writes, and nothing else:
/// the tenants, each with its sealed device-protocol signing key, and the audit record of a
/// tenant created.
protocol TenantStore: Sendable {
    /// Stores a new tenant with its sealed signing key and records it in the audit log, on the
    /// transaction of `executor`: a tenant is created inside the caller's transaction (the
    /// first start's, the admin API's). Throws `StorageError.uniqueViolation` when the slug is
    /// taken.
    func recordCreated(_ tenant: Tenant, sealedSigningKey: Data, actor: String, on executor: any SQLExecutor) async throws
    /// The tenant's sealed device-protocol signing key.
    func sealedSigningKey(tenantID: String) async throws -> Data?
    /// The tenant of that slug.
    func tenant(slug: String) async throws -> Tenant?
    func tenant(id: String) async throws -> Tenant?
    /// The default tenant, the one served at the paths without a slug.
    func defaultTenant() async throws -> Tenant?
}

/// The tenant service's store on the server's database (SQLite or PostgreSQL).
struct SQLTenantStore: TenantStore {
    let database: any Database
    let tenants: any TenantRepository
    let audit: AuditLog

    func recordCreated(_ tenant: Tenant, sealedSigningKey: Data, actor: String, on executor: any SQLExecutor) async throws {
        try await tenants.insert(tenant, sealedSigningKey: sealedSigningKey, on: executor)
        try await audit.record("tenant.created", actor: actor, tenantID: tenant.id, target: ("tenant", tenant.id),
                               details: ["slug": tenant.slug], at: tenant.createdAt, on: executor)
    }

    func sealedSigningKey(tenantID: String) async throws -> Data? {
        try await tenants.sealedSigningKey(tenantID: tenantID, on: database)
    }

    func tenant(slug: String) async throws -> Tenant? {
        try await tenants.find(slug: slug, on: database)
    }

    func tenant(id: String) async throws -> Tenant? {
        try await tenants.find(id: id, on: database)
    }

    func defaultTenant() async throws -> Tenant? {
        try await tenants.defaultTenant(on: database)
    }
}
