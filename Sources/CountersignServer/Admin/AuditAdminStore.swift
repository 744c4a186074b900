import Foundation

/// What the audit routes (`AuditAdminRoutes`) read, and nothing else.
protocol AuditAdminStore: Sendable {
    /// A tenant's events (every tenant's for nil) before `cursor`, newest first.
    func events(tenantID: String?, filter: AuditFilter, before cursor: String?, limit: Int) async throws -> [AuditEvent]
    /// The names of the records `events` name, as they are now.
    func names(for events: [AuditEvent], tenantID: String?) async throws -> AuditNames
}

/// The audit routes' store on the server's database (SQLite or PostgreSQL).
struct SQLAuditAdminStore: AuditAdminStore {
    let database: any Database
    let audit: any AuditRepository

    func events(tenantID: String?, filter: AuditFilter, before cursor: String?, limit: Int) async throws -> [AuditEvent] {
        try await audit.list(tenantID: tenantID, filter: filter, before: cursor, limit: limit, on: database)
    }

    func names(for events: [AuditEvent], tenantID: String?) async throws -> AuditNames {
        try await AuditNames.read(for: events, tenantID: tenantID, on: database)
    }
}
