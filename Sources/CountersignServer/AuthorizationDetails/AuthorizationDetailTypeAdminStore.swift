import Foundation

/// What the registry routes (`AuthorizationDetailTypeAdminRoutes`) write, and nothing else; they
/// read the registry from the tenant the guard resolved.
protocol AuthorizationDetailTypeAdminStore: Sendable {
    /// Replaces the tenant's registry in one transaction with its audit; the tenants this node
    /// remembers are forgotten after, so the next request checks against the new one.
    func setTypes(_ types: AuthorizationDetailTypes, tenantID: String, actor: String, at date: Date) async throws
}

/// The registry routes' store on the server's database (SQLite or PostgreSQL).
struct SQLAuthorizationDetailTypeAdminStore: AuthorizationDetailTypeAdminStore {
    let database: any Database
    let tenants: any TenantRepository
    let audit: AuditLog
    /// Holds the cache a changed registry must clear.
    let tenantService: TenantService

    func setTypes(_ types: AuthorizationDetailTypes, tenantID: String, actor: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await tenants.setAuthorizationDetailTypes(tenantID: tenantID, types, at: date, on: executor)
            try await audit.record(
                "tenant.authorization_detail_types_set", actor: actor, tenantID: tenantID,
                target: ("tenant", tenantID), details: ["types": types.names.joined(separator: " ")],
                at: date, on: executor)
        }
        tenantService.forget()
    }
}
