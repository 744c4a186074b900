import CountersignCore
import Foundation

/// What the tenant routes (`TenantAdminRoutes`) read and write, and nothing else. Each write is
/// one transaction with its audit, after which the tenants this node remembers are forgotten, so
/// that the next request sees the change.
protocol TenantAdminStore: Sendable {
    /// Tenants after `cursor`, by id.
    func tenants(after cursor: String?, limit: Int) async throws -> [Tenant]
    /// The tenant with this slug (or this id, `ten_…`), read from the database rather than from
    /// memory.
    func tenant(slug: String) async throws -> Tenant?
    /// Creates a tenant (never the default one) with its signing key.
    func create(slug: TenantSlug, displayName: String, actor: String, at date: Date) async throws -> Tenant
    /// Stores the renamed tenant, at its `updatedAt`.
    func rename(_ tenant: Tenant, actor: String) async throws
    /// Deletes the tenant and everything that belongs to it.
    func delete(_ tenant: Tenant, actor: String, at date: Date) async throws
}

/// The tenant routes' store on the server's database (SQLite or PostgreSQL).
struct SQLTenantAdminStore: TenantAdminStore {
    let database: any Database
    let tenants: any TenantRepository
    /// Makes tenants with their keys, and holds the cache a change must clear.
    let tenantService: TenantService
    let audit: AuditLog

    func tenants(after cursor: String?, limit: Int) async throws -> [Tenant] {
        try await tenants.list(after: cursor, limit: limit, on: database)
    }

    func tenant(slug: String) async throws -> Tenant? {
        slug.hasPrefix("ten_") ? try await tenants.find(id: slug, on: database) : try await tenants.find(slug: slug, on: database)
    }

    func create(slug: TenantSlug, displayName: String, actor: String, at date: Date) async throws -> Tenant {
        try await database.transaction { executor in
            try await tenantService.create(
                slug: slug, displayName: displayName, isDefault: false, actor: actor, at: date, on: executor)
        }
    }

    func rename(_ tenant: Tenant, actor: String) async throws {
        try await database.transaction { executor in
            try await tenants.update(tenant, on: executor)
            try await audit.record(
                "tenant.updated", actor: actor, tenantID: tenant.id, target: ("tenant", tenant.id),
                details: ["display_name": tenant.displayName], at: tenant.updatedAt, on: executor)
        }
        tenantService.forget()
    }

    func delete(_ tenant: Tenant, actor: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await tenants.delete(id: tenant.id, on: executor)
            try await audit.record(
                "tenant.deleted", actor: actor, tenantID: nil, target: ("tenant", tenant.id),
                details: ["slug": tenant.slug], at: date, on: executor)
        }
        tenantService.forget()
    }
}
