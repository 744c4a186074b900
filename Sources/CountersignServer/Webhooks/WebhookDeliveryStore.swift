import Foundation

/// What the event dispatcher (`WebhookDispatcher`) reads and writes, and nothing else: the
/// outbox rows it claims and closes, and each tenant's `events` webhook.
protocol WebhookDeliveryStore: WebhookTargets {
    /// Claims up to `limit` due rows, leasing them until `leaseUntil` (see
    /// `WebhookOutboxRepository.claim`).
    func claim(limit: Int, at date: Date, leaseUntil: Date) async throws -> [WebhookOutboxEntry]
    func markSent(id: String, at date: Date) async throws
    /// Puts a row back in the queue, due at `next`, with the reason it was not delivered.
    func reschedule(id: String, next: Date, error: String, at date: Date) async throws
    func markFailed(id: String, error: String, at date: Date) async throws
}

/// The event dispatcher's store on the server's database (SQLite or PostgreSQL).
struct SQLWebhookDeliveryStore: WebhookDeliveryStore {
    let database: any Database
    let outbox: any WebhookOutboxRepository
    let targets: any WebhookTargets

    func claim(limit: Int, at date: Date, leaseUntil: Date) async throws -> [WebhookOutboxEntry] {
        try await outbox.claim(limit: limit, at: date, leaseUntil: leaseUntil, on: database)
    }

    func markSent(id: String, at date: Date) async throws {
        try await outbox.markSent(id: id, at: date, on: database)
    }

    func reschedule(id: String, next: Date, error: String, at date: Date) async throws {
        try await outbox.reschedule(id: id, next: next, error: error, at: date, on: database)
    }

    func markFailed(id: String, error: String, at date: Date) async throws {
        try await outbox.markFailed(id: id, error: error, at: date, on: database)
    }

    func target(tenantID: String, purpose: WebhookPurpose) async throws -> WebhookTarget? {
        try await targets.target(tenantID: tenantID, purpose: purpose)
    }
}
