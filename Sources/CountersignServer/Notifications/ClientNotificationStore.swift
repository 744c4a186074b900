import Foundation

/// What the dispatcher of ping and push callbacks (`ClientNotificationDispatcher`, with its
/// `ClientNotificationSender`) reads and writes, and nothing else: its own queue, and through the
/// features that own them the request a callback announces, the client and tenant it is sent
/// for, and the one exchange of a push-mode approval for tokens.
protocol ClientNotificationStore: Sendable {
    /// Claims up to `limit` due notifications, leasing them until `leaseUntil` (see
    /// `ClientNotificationRepository.claim`).
    func claim(limit: Int, at date: Date, leaseUntil: Date) async throws -> [ClientNotification]
    /// Records the outcome of an attempt: `next` puts the notification back in the queue.
    func record(id: String, status: ClientNotification.Status, next: Date?, error: String?, at date: Date) async throws
    /// Push mode: marks up to `limit` requests that expired undecided before `date` as told, and
    /// queues their `expired_token` error, in one transaction.
    func queueExpiredPushErrors(before date: Date, limit: Int) async throws
    func request(id: String) async throws -> ApprovalTransaction?
    func client(id: String, tenantID: String) async throws -> Client?
    func tenant(id: String) async throws -> Tenant?
    /// Marks an approved request exchanged for the tokens about to be pushed; false if it was
    /// not approved or already exchanged.
    func markExchanged(requestID: String, at date: Date) async throws -> Bool
}

/// The client notifications' store on the server's database (SQLite or PostgreSQL).
struct SQLClientNotificationStore: ClientNotificationStore {
    let database: any Database
    let notifications: any ClientNotificationRepository
    let approvals: any ApprovalTransactionRepository
    let clients: any ClientRepository
    let tenants: any TenantRepository

    func claim(limit: Int, at date: Date, leaseUntil: Date) async throws -> [ClientNotification] {
        try await notifications.claim(limit: limit, at: date, leaseUntil: leaseUntil, on: database)
    }

    func record(id: String, status: ClientNotification.Status, next: Date?, error: String?, at date: Date) async throws {
        try await notifications.record(id: id, status: status, next: next, error: error, at: date, on: database)
    }

    func queueExpiredPushErrors(before date: Date, limit: Int) async throws {
        try await database.transaction { executor in
            let expired = try await approvals.claimExpiredPush(before: date, limit: limit, on: executor)
            try await notifications.enqueue(
                expired.map { .queued(.pushError, error: "expired_token", transaction: $0, at: date) }, on: executor)
        }
    }

    func request(id: String) async throws -> ApprovalTransaction? {
        try await approvals.find(id: id, on: database)
    }

    func client(id: String, tenantID: String) async throws -> Client? {
        try await clients.find(id: id, tenantID: tenantID, on: database)
    }

    func tenant(id: String) async throws -> Tenant? {
        try await tenants.find(id: id, on: database)
    }

    func markExchanged(requestID: String, at date: Date) async throws -> Bool {
        try await approvals.markExchanged(id: requestID, at: date, on: database)
    }
}
