import CountersignCore
import Foundation

/// Queues events for a tenant's event receiver, in the caller's transaction. A tenant without
/// an `events` webhook gets no rows at all, so events cost such tenants one indexed lookup.
///
/// ```swift
/// let events = TenantEvents(webhooks: webhooks, tenants: tenants, outbox: webhookOutbox, wakeup: webhookWakeup)
/// try await database.transaction { executor in
///     … // the change the event reports
///     try await events.enqueue(
///         event: "approval.not_requested", payload: details, tenantID: tenant.id, at: now, on: executor)
/// }
/// ```
public struct TenantEvents: Sendable {
    let webhooks: any TenantWebhookRepository
    /// Names the tenant in each event, by its slug.
    let tenants: any TenantRepository
    let outbox: any WebhookOutboxRepository
    let wakeup: PushWakeup

    /// The body every event is delivered in. It is built once, at enqueue, so every attempt
    /// sends the same bytes.
    private struct Envelope<Payload: Encodable>: Encodable {
        let id: String
        let event: String
        let tenant: String
        let createdAt: Date
        let data: Payload

        enum CodingKeys: String, CodingKey {
            case id, event, tenant, data
            case createdAt = "created_at"
        }
    }

    /// Queues `event` with `payload` as its `data` (a JSON object: a `JSONValue` or any
    /// `Encodable`; dates become RFC 3339 strings) if the tenant has an `events` webhook, and
    /// tells whether it did. The dispatcher of this node is woken; it finds the row once the
    /// caller's transaction commits (at once on SQLite, whose writes wait for the commit; by
    /// its next poll on PostgreSQL).
    @discardableResult
    public func enqueue(event: String, payload: some Encodable, tenantID: String, at date: Date,
                        on executor: any SQLExecutor) async throws -> Bool {
        guard try await webhooks.exists(tenantID: tenantID, purpose: .events, on: executor),
              let slug = try await tenants.find(id: tenantID, on: executor)?.slug else {
            return false
        }
        let id = Identifier.make("whd", at: date)
        let body = try JSON.encode(Envelope(id: id, event: event, tenant: slug, createdAt: date, data: payload))
        try await outbox.enqueue(
            WebhookOutboxEntry(
                id: id, tenantID: tenantID, event: event, payload: String(decoding: body, as: UTF8.self), status: .queued,
                attempts: 0, nextAttemptAt: date, lastError: nil, createdAt: date, updatedAt: date, sentAt: nil),
            on: executor)
        wakeup.signal()
        return true
    }
}
