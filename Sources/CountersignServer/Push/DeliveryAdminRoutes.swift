import CountersignCore
import Foundation
import Hummingbird

/// `GET /admin/v1/tenants/{tenant}/approvals/{id}/deliveries`: for one request, each device it
/// was sealed to, the device's push-token state and when it was last seen, and every
/// notification sent to it (queued, sent, failed with the provider's reason, cancelled).
struct DeliveryAdminRoutes: Sendable {
    let store: any DeliveryAdminStore
    let guardian: AdminGuard
    let now: @Sendable () -> Date

    struct Notification: Encodable, Sendable {
        let entry: PushOutboxEntry

        enum CodingKeys: String, CodingKey {
            case kind, provider
            case providerMessageID = "provider_message_id"
        }

        func encode(to encoder: any Encoder) throws {
            try DeliveryAttempts(
                id: entry.id, status: entry.status.rawValue, attempts: entry.attempts, lastError: entry.lastError,
                createdAt: entry.createdAt, sentAt: entry.sentAt,
                nextAttemptAt: entry.status == .queued ? entry.nextAttemptAt : nil
            ).encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(entry.kind, forKey: .kind)
            try container.encode(entry.provider, forKey: .provider)
            try container.encodeIfPresent(entry.providerMessageID, forKey: .providerMessageID)
        }
    }

    struct DeviceDelivery: Encodable, Sendable {
        let deviceID: String
        let name: String?
        let status: Device.Status?
        let push: DeviceDescription.PushStatus?
        let lastSeenAt: Date?
        let notifications: [Notification]

        enum CodingKeys: String, CodingKey {
            case name, status, push, notifications
            case deviceID = "device_id"
            case lastSeenAt = "last_seen_at"
        }
    }

    struct ClientCall: Encodable, Sendable {
        let entry: ClientNotification

        enum CodingKeys: String, CodingKey {
            case kind, error
        }

        func encode(to encoder: any Encoder) throws {
            try DeliveryAttempts(
                id: entry.id, status: entry.status.rawValue, attempts: entry.attempts, lastError: entry.lastError,
                createdAt: entry.createdAt, sentAt: entry.sentAt, nextAttemptAt: nil
            ).encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(entry.kind.rawValue, forKey: .kind)
            try container.encodeIfPresent(entry.error, forKey: .error)
        }
    }

    struct Deliveries: Encodable, Sendable {
        let requestID: String
        let userID: String
        let clientID: String
        let createdAt: Date
        let status: ApprovalTransaction.Status
        /// Whether an undecided request's time to answer has passed.
        let expired: Bool
        let expiresAt: Date
        let decidedByDevice: String?
        let devices: [DeviceDelivery]
        /// Ping and push clients: the calls to the client's notification endpoint.
        let clientNotifications: [ClientCall]
        /// The risk rules that fired for the request and acted on it, as its details carry them.
        let risk: [TransactionDetails.Risk]

        enum CodingKeys: String, CodingKey {
            case status, expired, devices, risk
            case clientNotifications = "client_notifications"
            case requestID = "request_id"
            case userID = "user_id"
            case clientID = "client_id"
            case createdAt = "created_at"
            case expiresAt = "expires_at"
            case decidedByDevice = "decided_by_device"
        }
    }

    /// A push notification in the tenant's recent list: the request (or notice) and device it was for.
    struct RecentNotification: Encodable, Sendable {
        let entry: PushOutboxEntry

        enum CodingKeys: String, CodingKey {
            case requestID = "request_id"
            case noticeID = "notice_id"
            case deviceID = "device_id"
        }

        func encode(to encoder: any Encoder) throws {
            try Notification(entry: entry).encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(entry.transactionID, forKey: .requestID)
            try container.encodeIfPresent(entry.noticeID, forKey: .noticeID)
            try container.encode(entry.deviceID, forKey: .deviceID)
        }

        /// The cursor of the next page: the creation time in milliseconds and the id without
        /// its hyphens (a cursor holds letters, digits and `_`).
        var cursor: String {
            "\(Int64((entry.createdAt.timeIntervalSince1970 * 1000).rounded()))_\(entry.id.replacingOccurrences(of: "-", with: ""))"
        }

        static func position(of cursor: String) throws(APIError) -> (createdAt: Date, id: String) {
            let parts = cursor.split(separator: "_")
            // At most the end of year 9999: a time that stays a time when stored back as milliseconds.
            guard parts.count == 2, parts[0].count <= 15, parts[0].utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let millis = Int64(parts[0]), millis <= 253_402_300_799_999, parts[1].count == 32,
                  parts[1].allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
                throw .badRequest("cursor is not a cursor this server issued")
            }
            let hex = Array(parts[1])
            let id = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
            return (Date(timeIntervalSince1970: Double(millis) / 1000), id)
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        router.get("/admin/v1/tenants/{tenant}/push-deliveries") { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .devicesRead)
            let page = try PageRequest(request)
            let statuses = request.uri.queryParameters.getAll("status")
            guard statuses.count <= 1 else { throw APIError.badRequest("query parameter status is given more than once") }
            let status: PushOutboxEntry.Status? = try statuses.first.map { raw throws(APIError) in
                guard let status = PushOutboxEntry.Status(rawValue: String(raw)) else {
                    throw .badRequest("status must be queued, sending, sent, failed or cancelled")
                }
                return status
            }
            let before = try page.cursor.map { cursor throws(APIError) in try RecentNotification.position(of: cursor) }
            let entries = try await store.recentPushNotifications(
                tenantID: tenant.id, status: status, before: before, limit: page.fetchLimit)
            return try JSON.response(page.page(entries.map(RecentNotification.init)) { $0.cursor })
        }

        router.get("/admin/v1/tenants/{tenant}/approvals/{id}/deliveries") { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .devicesRead)
            let id = try context.parameters.require("id")
            guard let transaction = try await store.request(id: id), transaction.tenantID == tenant.id else {
                throw AdminError.notFound("approval request \(id)")
            }
            let deviceIDs = try await store.deviceIDs(requestID: id)
            let devices = try await store.devices(ids: deviceIDs)
            let entries = try await store.pushNotifications(requestID: id)
            let grouped = Dictionary(grouping: entries, by: \.deviceID)
            let deliveries = deviceIDs.sorted().map { deviceID in
                let device = devices[deviceID]
                return DeviceDelivery(
                    deviceID: deviceID, name: device?.name, status: device?.status, push: device?.pushStatus,
                    lastSeenAt: device?.lastSeenAt, notifications: (grouped[deviceID] ?? []).map(Notification.init))
            }
            return try JSON.response(Deliveries(
                requestID: id, userID: transaction.userID, clientID: transaction.clientID, createdAt: transaction.createdAt,
                status: transaction.status,
                expired: transaction.status == .pending && transaction.isExpired(at: now()),
                expiresAt: transaction.expiresAt, decidedByDevice: transaction.decidedByDevice, devices: deliveries,
                clientNotifications: try await store.clientNotifications(requestID: id).map(ClientCall.init),
                risk: (try? TransactionDetails(canonicalBytes: Data(transaction.details.utf8)))?.risk ?? []))
        }
    }
}
