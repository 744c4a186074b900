import Foundation

/// What a tenant's webhook is for. A tenant has at most one of each.
public enum WebhookPurpose: String, Codable, Sendable, CaseIterable {
    /// Asked, while a user approves, whether the custom factor's data is acceptable.
    case customVerifier = "custom-verifier"
    /// Told what happened (`approval.not_requested`, …), through the outbox.
    case events = "events"
}

/// A tenant's webhook. The URL may be shown; the secret that signs every call is sealed under
/// the master key, bound to the tenant and purpose, and opened only to sign.
public struct TenantWebhook: Sendable, Equatable {
    public var tenantID: String
    public var purpose: WebhookPurpose
    public var url: String
    public var createdAt: Date
    public var updatedAt: Date

    /// The AAD that binds the sealed secret to this tenant and purpose: a secret copied into
    /// another tenant's row, or into the other purpose's, does not open there.
    var sealingContext: String { Self.sealingContext(tenantID: tenantID, purpose: purpose) }

    static func sealingContext(tenantID: String, purpose: WebhookPurpose) -> String {
        "tenant-webhook:\(tenantID):\(purpose.rawValue)"
    }
}

/// The storage of tenant webhooks.
public protocol TenantWebhookRepository: Sendable {
    /// The webhook and its sealed secret, if the tenant has one for `purpose`.
    func find(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor) async throws
        -> (TenantWebhook, Data)?
    /// The tenant's slug if it has a webhook for `purpose`: one query that both tells whether an
    /// event is wanted and names the tenant in it.
    func configuredTenantSlug(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor) async throws
        -> String?
    func list(tenantID: String, on executor: any SQLExecutor) async throws -> [TenantWebhook]
    func insert(_ webhook: TenantWebhook, sealedSecret: Data, on executor: any SQLExecutor) async throws
    /// Replaces the URL, and the secret when one is given.
    func update(_ webhook: TenantWebhook, sealedSecret: Data?, on executor: any SQLExecutor) async throws
    /// Deletes the webhook and returns it; nil if there was none.
    func delete(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor) async throws -> TenantWebhook?
}

public struct SQLTenantWebhookRepository: TenantWebhookRepository {
    public init() {}

    private static let columns = "tenant_id, purpose, url, created_at, updated_at"

    public func find(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor) async throws
        -> (TenantWebhook, Data)? {
        guard let row = try await executor.run(
            "SELECT \(raw: Self.columns), secret_sealed FROM tenant_webhooks WHERE tenant_id = \(tenantID) AND purpose = \(purpose.rawValue)").first else { return nil }
        return (try Self.decode(row), try row.data("secret_sealed"))
    }

    public func configuredTenantSlug(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor)
        async throws -> String? {
        try await executor.run(
            """
            SELECT tenants.slug FROM tenant_webhooks JOIN tenants ON tenants.id = tenant_webhooks.tenant_id
            WHERE tenant_webhooks.tenant_id = \(tenantID) AND tenant_webhooks.purpose = \(purpose.rawValue)
            """
        ).first?.string("slug")
    }

    public func list(tenantID: String, on executor: any SQLExecutor) async throws -> [TenantWebhook] {
        try await executor.run(
            "SELECT \(raw: Self.columns) FROM tenant_webhooks WHERE tenant_id = \(tenantID) ORDER BY purpose").map(Self.decode)
    }

    public func insert(_ webhook: TenantWebhook, sealedSecret: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO tenant_webhooks (tenant_id, purpose, url, secret_sealed, created_at, updated_at)
            VALUES (\(webhook.tenantID), \(webhook.purpose.rawValue), \(webhook.url), \(sealedSecret), \(webhook.createdAt), \(webhook.updatedAt))
            """)
    }

    public func update(_ webhook: TenantWebhook, sealedSecret: Data?, on executor: any SQLExecutor) async throws {
        if let sealedSecret {
            try await executor.run(
                "UPDATE tenant_webhooks SET url = \(webhook.url), secret_sealed = \(sealedSecret), updated_at = \(webhook.updatedAt) WHERE tenant_id = \(webhook.tenantID) AND purpose = \(webhook.purpose.rawValue)")
        } else {
            try await executor.run(
                "UPDATE tenant_webhooks SET url = \(webhook.url), updated_at = \(webhook.updatedAt) WHERE tenant_id = \(webhook.tenantID) AND purpose = \(webhook.purpose.rawValue)")
        }
    }

    public func delete(tenantID: String, purpose: WebhookPurpose, on executor: any SQLExecutor) async throws
        -> TenantWebhook? {
        try await executor.run(
            "DELETE FROM tenant_webhooks WHERE tenant_id = \(tenantID) AND purpose = \(purpose.rawValue) RETURNING \(raw: Self.columns)").first.map(Self.decode)
    }

    static func decode(_ row: SQLRow) throws -> TenantWebhook {
        guard let purpose = WebhookPurpose(rawValue: try row.string("purpose")) else {
            throw StorageError.corrupt("tenant webhook purpose")
        }
        return TenantWebhook(
            tenantID: try row.string("tenant_id"), purpose: purpose, url: try row.string("url"),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"))
    }
}
