import Foundation
import Hummingbird

/// The audit log, newest first: a tenant's at `/admin/v1/tenants/{tenant}/audit`, every
/// tenant's (system keys) at `/admin/v1/audit`, narrowed by `AuditFilter`'s query parameters.
/// Each event carries the names its actor and target have now (`AuditEventView`).
struct AuditAdminRoutes: Sendable {
    let store: any AuditAdminStore
    let guardian: AdminGuard

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        router.get("/admin/v1/audit") { request, _ in
            _ = try await guardian.systemKey(request, holding: .auditRead)
            return try await list(request, tenantID: nil)
        }
        router.get("/admin/v1/tenants/{tenant}/audit") { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .auditRead)
            return try await list(request, tenantID: tenant.id)
        }
    }

    private func list(_ request: Request, tenantID: String?) async throws -> Response {
        let page = try PageRequest(request)
        var query: [String: [String]] = [:]
        for name in AuditFilter.names {
            let values = request.uri.queryParameters.getAll(name)
            if !values.isEmpty { query[name] = values.map { String($0) } }
        }
        let filter = try AuditFilter(query: query)
        let events = try await store.events(tenantID: tenantID, filter: filter, before: page.cursor, limit: page.fetchLimit)
        let shown = page.page(events, cursor: \.id)
        let names = try await store.names(for: shown.items, tenantID: tenantID)
        return try JSON.response(Page(items: shown.items.map { AuditEventView($0, names: names) }, nextCursor: shown.nextCursor))
    }
}
