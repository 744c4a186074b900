import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/webhooks`: a tenant's webhooks and its recent events, under the
/// right `webhooks:manage`. Reading needs the same right: a custom verifier's URL tells where a
/// tenant's approvals are decided, and the events tell who approved what.
struct WebhookAdminRoutes: Sendable {
    let webhooks: TenantWebhookService
    let store: any WebhookAdminStore
    let guardian: AdminGuard
    let maximumBodySize: Int

    struct SetFields: Decodable {
        var url: String?
        var rotateSecret: Bool?

        enum CodingKeys: String, CodingKey {
            case url
            case rotateSecret = "rotate_secret"
        }
    }

    /// The administration API's view of a webhook; `secret` only in the answer that made it.
    struct WebhookRecord: Encodable, Sendable {
        let webhook: TenantWebhook
        let secret: String?

        enum CodingKeys: String, CodingKey {
            case purpose, url, secret
            case createdAt = "created_at"
            case updatedAt = "updated_at"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(webhook.purpose, forKey: .purpose)
            try container.encode(webhook.url, forKey: .url)
            try container.encodeIfPresent(secret, forKey: .secret)
            try container.encode(webhook.createdAt, forKey: .createdAt)
            try container.encode(webhook.updatedAt, forKey: .updatedAt)
        }
    }

    /// One queued event as the deliveries view shows it: never the body.
    struct DeliveryRecord: Encodable, Sendable {
        let entry: WebhookOutboxEntry

        enum CodingKeys: String, CodingKey {
            case event
        }

        func encode(to encoder: any Encoder) throws {
            try DeliveryAttempts(
                id: entry.id, status: entry.status.rawValue, attempts: entry.attempts, lastError: entry.lastError,
                createdAt: entry.createdAt, sentAt: entry.sentAt,
                nextAttemptAt: entry.status == .queued ? entry.nextAttemptAt : nil
            ).encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(entry.event, forKey: .event)
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/webhooks"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .webhooksManage)
            let items = try await webhooks.list(tenant: tenant).map { WebhookRecord(webhook: $0, secret: nil) }
            return try JSON.response(Page(items: items, nextCursor: nil))
        }
        // Each purpose is a route of its own: `events` also has `deliveries` below it, and a
        // literal path segment is matched before a parameter, so `{purpose}` would never see it.
        for purpose in WebhookPurpose.allCases {
            register(purpose: { _ in purpose }, at: base + "/" + purpose.rawValue, on: router)
        }
        register(purpose: { context in try TenantWebhookService.purpose(try context.parameters.require("purpose")) },
                 at: base + "/{purpose}", on: router)
        router.get(RouterPath(base + "/events/deliveries")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .webhooksManage)
            let page = try PageRequest(request)
            let entries = try await store.events(tenantID: tenant.id, before: page.cursor, limit: page.fetchLimit)
            return try JSON.response(page.page(entries.map(DeliveryRecord.init), cursor: \.entry.id))
        }
    }

    private func register(purpose: @escaping @Sendable (CountersignRequestContext) throws -> WebhookPurpose, at path: String,
                          on router: some RouterMethods<CountersignRequestContext>) {
        router.put(RouterPath(path)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .webhooksManage)
            let purpose = try purpose(context)
            let fields = try await request.decodeJSON(SetFields.self, limit: maximumBodySize)
            guard let raw = fields.url else { throw AdminError.missingField("url") }
            let outcome = try await webhooks.set(
                purpose, url: try WebhookURL(raw), rotateSecret: fields.rotateSecret ?? false, tenant: tenant,
                actor: "admin-key:\(key.id)")
            return try JSON.response(
                WebhookRecord(webhook: outcome.webhook, secret: outcome.secret), status: outcome.created ? .created : .ok)
        }
        router.get(RouterPath(path)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .webhooksManage)
            let webhook = try await webhooks.find(try purpose(context), tenant: tenant)
            return try JSON.response(WebhookRecord(webhook: webhook, secret: nil))
        }
        router.delete(RouterPath(path)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .webhooksManage)
            try await webhooks.delete(try purpose(context), tenant: tenant, actor: "admin-key:\(key.id)")
            return Response(status: .noContent)
        }
    }
}
