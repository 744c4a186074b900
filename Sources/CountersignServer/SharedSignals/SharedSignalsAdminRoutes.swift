import CountersignCore
import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/ssf-streams`: what the tenant's Shared Signals receivers
/// registered, and how their SETs fared, under `webhooks:manage` (the right over what the tenant
/// sends out). Streams are the receivers' to change; an operator who wants one gone revokes its
/// key and deletes the stream with `DELETE …/ssf-streams/{stream}`.
struct SharedSignalsAdminRoutes: Sendable {
    let database: any Database
    let audit: AuditLog
    let guardian: AdminGuard
    let now: @Sendable () -> Date
    let streams = EventStreamRepository()

    struct StreamRecord: Encodable, Sendable {
        let streamID: String
        let ownerKeyID: String
        let aud: [String]
        let deliveryMethod: String
        /// The push endpoint's host (the URL may carry a token of the receiver's).
        let endpointHost: String?
        let status: String
        let statusReason: String?
        let eventsDelivered: [String]
        let format: String
        let description: String?
        /// How many of its SETs are in each state.
        let events: [String: Int]
        let createdAt: Date
        let updatedAt: Date

        enum CodingKeys: String, CodingKey {
            case streamID = "stream_id"
            case ownerKeyID = "owner_key_id"
            case aud
            case deliveryMethod = "delivery_method"
            case endpointHost = "endpoint_host"
            case status
            case statusReason = "status_reason"
            case eventsDelivered = "events_delivered"
            case format, description, events
            case createdAt = "created_at"
            case updatedAt = "updated_at"
        }
    }

    struct EventRecord: Encodable, Sendable {
        let event: StreamEvent

        enum CodingKeys: String, CodingKey {
            case eventType = "event_type"
        }

        func encode(to encoder: any Encoder) throws {
            try DeliveryAttempts(
                id: event.id, status: event.status.rawValue, attempts: event.attempts, lastError: event.lastError,
                createdAt: event.createdAt, sentAt: event.sentAt,
                nextAttemptAt: event.status == .queued || event.status == .delivered ? event.nextAttemptAt : nil
            ).encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(event.eventType, forKey: .eventType)
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        router.get("/admin/v1/tenants/{tenant}/ssf-streams") { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .webhooksManage)
            let counts = try await streams.counts(tenantID: tenant.id, on: database)
            let items = try await streams.list(tenantID: tenant.id, on: database).map { stream in
                StreamRecord(
                    streamID: stream.id, ownerKeyID: stream.ownerKeyID, aud: stream.audience,
                    deliveryMethod: stream.deliveryMethod.rawValue,
                    endpointHost: stream.endpointURL.flatMap { try? WebhookURL($0).host }, status: stream.status.rawValue,
                    statusReason: stream.statusReason, eventsDelivered: stream.eventsDelivered.map(\.rawValue),
                    format: stream.subjectFormat.rawValue, description: stream.description, events: counts[stream.id] ?? [:],
                    createdAt: stream.createdAt, updatedAt: stream.updatedAt)
            }
            return try JSON.response(["items": items])
        }
        router.get("/admin/v1/tenants/{tenant}/ssf-streams/{stream}/events") { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .webhooksManage)
            let stream = try await stream(context, tenant: tenant)
            let page = try PageRequest(request)
            let events = try await streams.recent(
                streamID: stream.id, before: page.cursor, limit: page.fetchLimit, on: database)
            return try JSON.response(page.page(events.map(EventRecord.init)) { $0.event.id })
        }
        router.delete("/admin/v1/tenants/{tenant}/ssf-streams/{stream}") { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .webhooksManage)
            let stream = try await stream(context, tenant: tenant)
            try await database.transaction { executor in
                try await streams.delete(id: stream.id, on: executor)
                try await audit.record(
                    "ssf_stream.deleted", actor: "admin-key:\(key.id)", tenantID: tenant.id, target: ("ssf_stream", stream.id),
                    details: ["owner_key_id": stream.ownerKeyID], at: now(), on: executor)
            }
            return Response(status: .noContent)
        }
    }

    private func stream(_ context: CountersignRequestContext, tenant: Tenant) async throws -> EventStream {
        let id = try context.parameters.require("stream")
        guard let stream = try await streams.find(id: id, tenantID: tenant.id, on: database) else {
            throw AdminError.notFound("stream \(id)")
        }
        return stream
    }
}
