import Foundation

/// The first start: a default tenant and a system admin key holding every right. The key's
/// secret is returned once, for the operator to copy from the console; only its hash is kept.
///
/// A start that fails before the server listens withdraws the key it made (`withdraw`), so
/// the secret of a server that never ran is shown nowhere; the next start, finding no key at
/// all, makes a new one.
struct Bootstrap: Sendable {
    struct Result: Sendable {
        let tenant: Tenant
        let adminKeySecret: String?
    }

    let database: any Database
    let tenants: any TenantRepository
    let adminKeys: any AdminKeyRepository
    /// Makes the default tenant the way every tenant is made.
    let tenantService: TenantService
    /// Issues the bootstrap key the way every key is issued.
    let authenticator: AdminAuthenticator
    let audit: AuditLog
    let now: @Sendable () -> Date

    func run() async throws -> Result {
        let date = now()
        return try await database.transaction { executor in
            try await executor.lockForStartup()
            let tenant: Tenant
            if let existing = try await tenants.defaultTenant(on: executor) {
                tenant = existing
                guard try await !adminKeys.anyIssued(on: executor) else {
                    return Result(tenant: existing, adminKeySecret: nil)
                }
            } else {
                tenant = try await tenantService.create(
                    slug: try TenantSlug("default"), displayName: "Default", isDefault: true, actor: "system", at: date,
                    on: executor)
            }
            let (_, secret) = try await authenticator.issue(
                tenantID: nil, name: "bootstrap", rights: AdminRight.allCases, createdBy: nil, at: date, on: executor)
            return Result(tenant: tenant, adminKeySecret: secret)
        }
    }

    /// Removes the bootstrap key whose secret is `secret`, recording why in the audit log.
    func withdraw(secret: String) async throws {
        guard let id = secret.split(separator: ".").first.map(String.init) else { return }
        try await database.transaction { executor in
            guard try await adminKeys.withdraw(id: id, on: executor) else { return }
            try await audit.record(
                "admin_key.withdrawn", actor: "system", tenantID: nil, target: ("admin_key", id),
                details: ["reason": "the server did not start"], at: now(), on: executor)
        }
    }
}
