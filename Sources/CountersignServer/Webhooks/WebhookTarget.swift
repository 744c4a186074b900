import Foundation

/// A webhook ready to be called: its URL and its opened secret. It lives for one call and
/// describes itself by URL host only.
struct WebhookTarget: Sendable, CustomStringConvertible {
    let url: String
    let secret: String

    var description: String { "WebhookTarget(\((try? WebhookURL(url).host) ?? "?"))" }
}

/// Where the callers of webhooks (`WebhookDispatcher`, `CustomVerifier`) find a tenant's webhook
/// for a purpose, with its secret opened.
protocol WebhookTargets: Sendable {
    /// The tenant's webhook for `purpose`, nil if it has none. A secret that no longer opens
    /// (the row was copied from elsewhere, or the master key is wrong) is an error, not nil.
    func target(tenantID: String, purpose: WebhookPurpose) async throws -> WebhookTarget?
}

/// The webhooks on the server's database, their secrets opened with the master key.
struct SQLWebhookTargets: WebhookTargets {
    let database: any Database
    let webhooks: any TenantWebhookRepository
    let sealer: SecretSealer

    func target(tenantID: String, purpose: WebhookPurpose) async throws -> WebhookTarget? {
        guard let (webhook, sealed) = try await webhooks.find(tenantID: tenantID, purpose: purpose, on: database) else {
            return nil
        }
        let secret = try sealer.open(sealed, context: webhook.sealingContext)
        return WebhookTarget(url: webhook.url, secret: String(decoding: secret, as: UTF8.self))
    }
}
