import Foundation

/// The storage of tenant webhooks.
public protocol TenantWebhookRepository: Sendable {
    /// The webhook and its sealed secret, if the tenant has one for `purpose`.
    func find(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor) async throws
        -> (TenantWebhook, Data)?
    /// Whether the tenant has a webhook for `purpose`.
    func exists(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor) async throws -> Bool
    func list(tenantID: String, on executor: any SQLExecutor) async throws -> [TenantWebhook]
    func insert(_ webhook: TenantWebhook, sealedSecret: Data, on executor: any SQLExecutor) async throws
    /// Replaces the URL, and the secret when one is given.
    func update(_ webhook: TenantWebhook, sealedSecret: Data?, on executor: any SQLExecutor) async throws
    /// Deletes the webhook and returns it; nil if there was none.
    func delete(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor) async throws -> TenantWebhook?
}

public struct SQLTenantWebhookRepository: TenantWebhookRepository {
    public init() {}

    private typealias Row = TenantWebhookRow

    public func find(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor) async throws
        -> (TenantWebhook, Data)? {
        guard let row = try await executor.run(
            """
            SELECT \(raw: Row.columns), secret_sealed FROM tenant_webhooks
            WHERE tenant_id = \(tenantID) AND purpose = \(purpose)
            """).first else { return nil }
        return (try row.decode(Row.self).webhook, try row.decode(column: "secret_sealed", as: Data.self))
    }

    public func exists(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            "SELECT purpose FROM tenant_webhooks WHERE tenant_id = \(tenantID) AND purpose = \(purpose)")).isEmpty
    }

    public func list(tenantID: String, on executor: any SQLExecutor) async throws -> [TenantWebhook] {
        try await executor.all(
            "SELECT \(raw: Row.columns) FROM tenant_webhooks WHERE tenant_id = \(tenantID) ORDER BY purpose",
            as: Row.self
        ).map(\.webhook)
    }

    public func insert(_ webhook: TenantWebhook, sealedSecret: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO tenant_webhooks (tenant_id, purpose, url, secret_sealed, created_at, updated_at)
            VALUES (\(webhook.tenantID), \(webhook.purpose), \(webhook.url), \(sealedSecret), \(webhook.createdAt),
                \(webhook.updatedAt))
            """)
    }

    public func update(_ webhook: TenantWebhook, sealedSecret: Data?, on executor: any SQLExecutor) async throws {
        if let sealedSecret {
            try await executor.run(
                """
                UPDATE tenant_webhooks
                SET url = \(webhook.url), secret_sealed = \(sealedSecret), updated_at = \(webhook.updatedAt)
                WHERE tenant_id = \(webhook.tenantID) AND purpose = \(webhook.purpose)
                """)
        } else {
            try await executor.run(
                """
                UPDATE tenant_webhooks SET url = \(webhook.url), updated_at = \(webhook.updatedAt)
                WHERE tenant_id = \(webhook.tenantID) AND purpose = \(webhook.purpose)
                """)
        }
    }

    public func delete(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor) async throws
        -> TenantWebhook? {
        try await executor.first(
            """
            DELETE FROM tenant_webhooks WHERE tenant_id = \(tenantID) AND purpose = \(purpose)
            RETURNING \(raw: Row.columns)
            """, as: Row.self
        )?.webhook
    }
}

/// A row of `tenant_webhooks` as stored, without its sealed secret (which only `find` reads).
struct TenantWebhookRow: Decodable {
    /// The columns `CodingKeys` names, for `SELECT` and `RETURNING`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var tenantID: String
    var purpose: WebhookPurpose
    var url: String
    var createdAt: Date
    var updatedAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case tenantID = "tenant_id"
        case purpose, url
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    var webhook: TenantWebhook {
        TenantWebhook(tenantID: tenantID, purpose: purpose, url: url, createdAt: createdAt, updatedAt: updatedAt)
    }
}
