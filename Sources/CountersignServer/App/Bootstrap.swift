import Foundation

/// The first start: a default tenant and a system admin key holding every right. The key's
/// secret is returned once, for the operator to copy from the console; only its hash is kept.
enum Bootstrap {
    struct Result: Sendable {
        let tenant: Tenant
        let adminKeySecret: String?
    }

    static func run(services: ServerServices) async throws -> Result {
        let date = services.now()
        return try await services.database.transaction { executor in
            try await executor.lockForStartup()
            if let existing = try await services.repositories.tenants.defaultTenant(on: executor) {
                return Result(tenant: existing, adminKeySecret: nil)
            }
            let tenant = try await services.tenantService.create(
                slug: try TenantSlug("default"), displayName: "Default", isDefault: true, actor: "system", at: date,
                on: executor)
            let (_, secret) = try await services.adminAuthenticator.issue(
                tenantID: nil, name: "bootstrap", rights: AdminRight.allCases, createdBy: nil, at: date, on: executor)
            return Result(tenant: tenant, adminKeySecret: secret)
        }
    }
}
