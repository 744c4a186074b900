import CountersignCore
import Foundation

/// Sets, shows and deletes a tenant's webhooks. A new webhook gets a new secret, as does one
/// whose secret is rotated; the secret is returned to the caller that time only, sealed for
/// storage, and every change is audited (with the host, never the whole URL, which may carry a
/// token of the receiver's).
struct TenantWebhookService: Sendable {
    let services: ServerServices

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
        let date = services.now()
        let repository = services.repositories.webhooks
        let sealer = services.sealer
        do {
            return try await services.database.transaction { executor in
                let existing = try await repository.find(tenantID: tenant.id, purpose: purpose, on: executor)?.0
                let webhook = TenantWebhook(
                    tenantID: tenant.id, purpose: purpose, url: url.value, createdAt: existing?.createdAt ?? date,
                    updatedAt: date)
                let secret = existing == nil || rotateSecret ? Self.newSecret() : nil
                let sealed = try secret.map { try sealer.seal(Data($0.utf8), context: webhook.sealingContext) }
                if existing == nil, let sealed {
                    try await repository.insert(webhook, sealedSecret: sealed, on: executor)
                } else {
                    try await repository.update(webhook, sealedSecret: sealed, on: executor)
                }
                try await services.audit.record(
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
        guard let (webhook, _) = try await services.repositories.webhooks.find(
            tenantID: tenant.id, purpose: purpose, on: services.database) else {
            throw AdminError.notFound("\(purpose.rawValue) webhook")
        }
        return webhook
    }

    func list(tenant: Tenant) async throws -> [TenantWebhook] {
        try await services.repositories.webhooks.list(tenantID: tenant.id, on: services.database)
    }

    func delete(_ purpose: WebhookPurpose, tenant: Tenant, actor: String) async throws {
        let date = services.now()
        try await services.database.transaction { executor in
            guard let deleted = try await services.repositories.webhooks.delete(
                tenantID: tenant.id, purpose: purpose, on: executor) else {
                throw AdminError.notFound("\(purpose.rawValue) webhook")
            }
            try await services.audit.record(
                "webhook.deleted", actor: actor, tenantID: tenant.id, target: ("webhook", purpose.rawValue),
                details: ["host": (try? WebhookURL(deleted.url).host) ?? ""], at: date, on: executor)
        }
    }
}

/// A webhook ready to be called: its URL and its opened secret. It lives for one call and
/// describes itself by URL host only.
struct WebhookTarget: Sendable, CustomStringConvertible {
    let url: String
    let secret: String

    var description: String { "WebhookTarget(\((try? WebhookURL(url).host) ?? "?"))" }

    /// The tenant's webhook for `purpose`, nil if it has none. A secret that no longer opens
    /// (the row was copied from elsewhere, or the master key is wrong) is an error, not nil.
    static func load(tenantID: String, purpose: WebhookPurpose, services: ServerServices) async throws -> WebhookTarget? {
        guard let (webhook, sealed) = try await services.repositories.webhooks.find(
            tenantID: tenantID, purpose: purpose, on: services.database) else { return nil }
        let secret = try services.sealer.open(sealed, context: webhook.sealingContext)
        return WebhookTarget(url: webhook.url, secret: String(decoding: secret, as: UTF8.self))
    }
}
