import Foundation

/// What `TenantWebhookService` reads and writes, and nothing else. Each write is one
/// transaction with its audit record.
protocol TenantWebhookStore: Sendable {
    func find(tenantID: String, purpose: WebhookPurpose) async throws -> TenantWebhook?
    func list(tenantID: String) async throws -> [TenantWebhook]
    /// Stores the tenant's webhook for `purpose`: `make` is given the one it replaces (nil for
    /// a new one) and returns the webhook to store and its new secret, sealed for it (nil keeps
    /// the stored secret; a new webhook must have one). The audit record's details are
    /// `auditDetails` of the replaced webhook and whether the secret changed.
    func put(
        tenantID: String, purpose: WebhookPurpose,
        make: @escaping @Sendable (TenantWebhook?) throws -> (webhook: TenantWebhook, sealedSecret: Data?),
        auditDetails: @escaping @Sendable (_ replaced: TenantWebhook?, _ newSecret: Bool) -> [String: String], actor: String, at date: Date
    ) async throws -> (webhook: TenantWebhook, created: Bool)
    /// Deletes the webhook and records it; nil when the tenant has none for `purpose`.
    func delete(tenantID: String, purpose: WebhookPurpose, actor: String, at date: Date,
                auditDetails: @escaping @Sendable (TenantWebhook) -> [String: String]) async throws -> TenantWebhook?
}

/// The tenant webhook store on the server's database (SQLite or PostgreSQL).
struct SQLTenantWebhookStore: TenantWebhookStore {
    let database: any Database
    let webhooks: any TenantWebhookRepository
    let audit: AuditLog

    func find(tenantID: String, purpose: WebhookPurpose) async throws -> TenantWebhook? {
        try await webhooks.find(tenantID: tenantID, purpose: purpose, on: database)?.0
    }

    func list(tenantID: String) async throws -> [TenantWebhook] {
        try await webhooks.list(tenantID: tenantID, on: database)
    }

    func put(
        tenantID: String, purpose: WebhookPurpose,
        make: @escaping @Sendable (TenantWebhook?) throws -> (webhook: TenantWebhook, sealedSecret: Data?),
        auditDetails: @escaping @Sendable (_ replaced: TenantWebhook?, _ newSecret: Bool) -> [String: String], actor: String, at date: Date
    ) async throws -> (webhook: TenantWebhook, created: Bool) {
        try await database.transaction { executor in
            let existing = try await webhooks.find(tenantID: tenantID, purpose: purpose, on: executor)?.0
            let (webhook, sealed) = try make(existing)
            if existing == nil {
                guard let sealed else { throw StorageError.corrupt("a new webhook needs a secret") }
                try await webhooks.insert(webhook, sealedSecret: sealed, on: executor)
            } else {
                try await webhooks.update(webhook, sealedSecret: sealed, on: executor)
            }
            try await audit.record(
                "webhook.set", actor: actor, tenantID: tenantID, target: ("webhook", purpose.rawValue),
                details: auditDetails(existing, sealed != nil), at: date, on: executor)
            return (webhook, existing == nil)
        }
    }

    func delete(tenantID: String, purpose: WebhookPurpose, actor: String, at date: Date,
                auditDetails: @escaping @Sendable (TenantWebhook) -> [String: String]) async throws -> TenantWebhook? {
        try await database.transaction { executor in
            guard let deleted = try await webhooks.delete(tenantID: tenantID, purpose: purpose, on: executor) else {
                return nil
            }
            try await audit.record(
                "webhook.deleted", actor: actor, tenantID: tenantID, target: ("webhook", purpose.rawValue),
                details: auditDetails(deleted), at: date, on: executor)
            return deleted
        }
    }
}
