import CountersignCore
import Foundation

/// Sets, shows and deletes a tenant's webhooks. A new webhook gets a new secret, as does one
/// whose secret is rotated; the secret is returned to the caller that time only, sealed for
/// storage, and every change is audited (with the host, never the whole URL, which may carry a
/// token of the receiver's).
struct TenantWebhookService: Sendable {
    let store: any TenantWebhookStore
    /// Seals each secret under the master key before it is stored.
    let sealer: SecretSealer
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
        // Made before the transaction, used only if the webhook is new or its secret rotated.
        let candidate = Self.newSecret()
        let sealer = sealer
        do {
            let (webhook, created) = try await store.put(
                tenantID: tenant.id, purpose: purpose,
                make: { existing in
                    let webhook = TenantWebhook(
                        tenantID: tenant.id, purpose: purpose, url: url.value, createdAt: existing?.createdAt ?? date,
                        updatedAt: date)
                    let sealed = existing == nil || rotateSecret
                        ? try sealer.seal(Data(candidate.utf8), context: webhook.sealingContext) : nil
                    return (webhook, sealed)
                },
                auditDetails: { replaced, newSecret in
                    ["host": url.host, "secret": replaced == nil ? "created" : newSecret ? "rotated" : "kept"]
                },
                actor: actor, at: date)
            return Outcome(webhook: webhook, secret: created || rotateSecret ? candidate : nil, created: created)
        } catch StorageError.uniqueViolation {
            // Two first sets at once: the other one's row and secret stand.
            throw AdminError.conflict("the \(purpose.rawValue) webhook was set by another call at the same time; try again")
        }
    }

    func find(_ purpose: WebhookPurpose, tenant: Tenant) async throws -> TenantWebhook {
        guard let webhook = try await store.find(tenantID: tenant.id, purpose: purpose) else {
            throw AdminError.notFound("\(purpose.rawValue) webhook")
        }
        return webhook
    }

    func list(tenant: Tenant) async throws -> [TenantWebhook] {
        try await store.list(tenantID: tenant.id)
    }

    func delete(_ purpose: WebhookPurpose, tenant: Tenant, actor: String) async throws {
        guard try await store.delete(
            tenantID: tenant.id, purpose: purpose, actor: actor, at: now(),
            auditDetails: { deleted in ["host": (try? WebhookURL(deleted.url).host) ?? ""] }) != nil else {
            throw AdminError.notFound("\(purpose.rawValue) webhook")
        }
    }
}
