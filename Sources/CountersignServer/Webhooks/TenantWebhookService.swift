import CountersignCore
import Foundation

/// Sets, shows and deletes a tenant's webhooks. A new webhook gets a new secret, as does one
/// whose secret is rotated; the secret is returned to the caller that time only, sealed for
/// storage, and every change is audited (with the host, never the whole URL, which may carry a
/// token of the receiver's).
struct TenantWebhookService: Sendable {
    let database: any Database
    let webhooks: any TenantWebhookRepository
    /// Seals each secret under the master key before it is stored.
    let sealer: SecretSealer
    let audit: AuditLog
    let now: @Sendable () -> Date

    /// What a set did: the webhook as stored, and its secret when one was made.
    struct Outcome: Sendable {
        let webhook: TenantWebhook
        let secret: String?
        let created: Bool
    }

    /// A purpose named in a path; an unknown one names nothing there, hence 404.
    static func purpose(_ raw: String) throws(AdminError) -> WebhookPurpose {
        guard let purpose = WebhookPurpose(rawValue: raw) else { throw .notFound("webhook purpose \(raw)") }
        return purpose
    }

    /// 32 random bytes in base64url, used as shown (43 ASCII characters) as the HMAC key.
    static func newSecret() -> String { Secrets.randomBytes(32).base64URLEncodedString }

    func set(_ purpose: WebhookPurpose, url: WebhookURL, rotateSecret: Bool, tenant: Tenant, actor: String)
        async throws -> Outcome {
        let date = now()
        do {
            return try await database.transaction { executor in
                let existing = try await webhooks.find(tenantID: tenant.id, purpose: purpose, on: executor)?.0
                let webhook = TenantWebhook(
                    tenantID: tenant.id, purpose: purpose, url: url.value, createdAt: existing?.createdAt ?? date,
                    updatedAt: date)
                let secret = existing == nil || rotateSecret ? Self.newSecret() : nil
                let sealed = try secret.map { try sealer.seal(Data($0.utf8), context: webhook.sealingContext) }
                if existing == nil, let sealed {
                    try await webhooks.insert(webhook, sealedSecret: sealed, on: executor)
                } else {
                    try await webhooks.update(webhook, sealedSecret: sealed, on: executor)
                }
                try await audit.record(
                    "webhook.set", actor: actor, tenantID: tenant.id, target: ("webhook", purpose.rawValue),
                    details: ["host": url.host,
                              "secret": existing == nil ? "created" : secret == nil ? "kept" : "rotated"],
                    at: date, on: executor)
                return Outcome(webhook: webhook, secret: secret, created: existing == nil)
            }
        } catch StorageError.uniqueViolation {
            // Two first sets at once: the other one's row and secret stand.
            throw AdminError.conflict("the \(purpose.rawValue) webhook was set by another call at the same time; try again")
        }
    }

    func find(_ purpose: WebhookPurpose, tenant: Tenant) async throws -> TenantWebhook {
        guard let (webhook, _) = try await webhooks.find(tenantID: tenant.id, purpose: purpose, on: database) else {
            throw AdminError.notFound("\(purpose.rawValue) webhook")
        }
        return webhook
    }

    func list(tenant: Tenant) async throws -> [TenantWebhook] {
        try await webhooks.list(tenantID: tenant.id, on: database)
    }

    func delete(_ purpose: WebhookPurpose, tenant: Tenant, actor: String) async throws {
        let date = now()
        try await database.transaction { executor in
            guard let deleted = try await webhooks.delete(
                tenantID: tenant.id, purpose: purpose, on: executor) else {
                throw AdminError.notFound("\(purpose.rawValue) webhook")
            }
            try await audit.record(
                "webhook.deleted", actor: actor, tenantID: tenant.id, target: ("webhook", purpose.rawValue),
                details: ["host": (try? WebhookURL(deleted.url).host) ?? ""], at: date, on: executor)
        }
    }
}
