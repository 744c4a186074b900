import Foundation

/// What the webhook routes (`WebhookAdminRoutes`) read beside `TenantWebhookService`, and
/// nothing else: the tenant's recent events, for the deliveries view.
protocol WebhookAdminStore: Sendable {
    /// The tenant's queued and sent events before `cursor`, newest first.
    func events(tenantID: String, before cursor: String?, limit: Int) async throws -> [WebhookOutboxEntry]
}

/// The webhook routes' store on the server's database (SQLite or PostgreSQL).
struct SQLWebhookAdminStore: WebhookAdminStore {
    let database: any Database
    let outbox: any WebhookOutboxRepository

    func events(tenantID: String, before cursor: String?, limit: Int) async throws -> [WebhookOutboxEntry] {
        try await outbox.recent(tenantID: tenantID, before: cursor, limit: limit, on: database)
    }
}
