import Foundation

/// What the deliveries view (`DeliveryAdminRoutes`) reads, and nothing else: one approval
/// request, the devices it was sealed to, and every notification sent for it.
protocol DeliveryAdminStore: Sendable {
    func request(id: String) async throws -> ApprovalTransaction?
    /// The devices the request was sealed to.
    func deviceIDs(requestID: String) async throws -> [String]
    /// The devices that still exist among `ids`, by id.
    func devices(ids: [String]) async throws -> [String: Device]
    /// The push notifications queued for the request, every device's.
    func pushNotifications(requestID: String) async throws -> [PushOutboxEntry]
    /// The calls to a ping or push client's notification endpoint for the request.
    func clientNotifications(requestID: String) async throws -> [ClientNotification]
    /// The tenant's push notifications, newest first (`PushOutboxRepository.recent`).
    func recentPushNotifications(tenantID: String, status: PushOutboxEntry.Status?, before: (createdAt: Date, id: String)?,
                                 limit: Int) async throws -> [PushOutboxEntry]
}

/// The deliveries view's store on the server's database (SQLite or PostgreSQL).
struct SQLDeliveryAdminStore: DeliveryAdminStore {
    let database: any Database
    let approvals: any ApprovalTransactionRepository
    let devices: any DeviceRepository
    let pushOutbox: any PushOutboxRepository
    let clientNotifications: any ClientNotificationRepository

    func request(id: String) async throws -> ApprovalTransaction? {
        try await approvals.find(id: id, on: database)
    }

    func deviceIDs(requestID: String) async throws -> [String] {
        try await approvals.deviceIDs(transactionID: requestID, on: database)
    }

    func devices(ids: [String]) async throws -> [String: Device] {
        try await devices.find(ids: ids, on: database)
    }

    func pushNotifications(requestID: String) async throws -> [PushOutboxEntry] {
        try await pushOutbox.entries(transactionID: requestID, on: database)
    }

    func clientNotifications(requestID: String) async throws -> [ClientNotification] {
        try await clientNotifications.list(transactionID: requestID, on: database)
    }

    func recentPushNotifications(tenantID: String, status: PushOutboxEntry.Status?, before: (createdAt: Date, id: String)?,
                                 limit: Int) async throws -> [PushOutboxEntry] {
        try await pushOutbox.recent(tenantID: tenantID, status: status, before: before, limit: limit, on: database)
    }
}
