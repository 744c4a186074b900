import CountersignCore
import Foundation

/// What the push dispatcher (`PushDispatcher`) reads and writes, and nothing else: the outbox
/// rows it claims and closes, the devices they are addressed to, whether the requests they
/// announce are still waiting, the notices they tell of, and the push tokens providers call dead.
protocol PushDeliveryStore: Sendable {
    /// Claims up to `limit` due rows, leasing them until `leaseUntil` (see
    /// `PushOutboxRepository.claim`).
    func claim(limit: Int, at date: Date, leaseUntil: Date) async throws -> [PushOutboxEntry]
    /// The devices with these ids that still exist, by id.
    func devices(ids: [String]) async throws -> [String: Device]
    /// Which of these requests are still waiting for an answer. The approvals feature owns the
    /// requests and answers this; push delivery never reads their table.
    func undecided(requestIDs: [String]) async throws -> Set<String>
    /// The security notices with these ids that still exist, by id (what a notice's alert says).
    func notices(ids: [String]) async throws -> [String: SecurityNotice]
    /// Records a batch's outcomes in one transaction: the `sent` rows in a few statements, then
    /// each of `closed` in order.
    func record(sent: [(id: String, providerMessageID: String?)], closed: [PushRowOutcome], at date: Date) async throws
}

/// How one claimed row that was not delivered is closed or put back, as the dispatcher decided.
enum PushRowOutcome: Sendable {
    case failed(PushOutboxEntry, reason: String)
    case cancelled(PushOutboxEntry, reason: String)
    case rescheduled(PushOutboxEntry, next: Date, reason: String)
    /// Failed because the provider called the device's token dead: the token (the one the row
    /// was sent to, if the device had one) is invalidated, and audited, unless the device
    /// registered a new one since `since`.
    case tokenRefused(PushOutboxEntry, token: String?, reason: String, since: Date?)
}

/// The push dispatcher's store on the server's database (SQLite or PostgreSQL): its own outbox,
/// and the devices and approvals features' repositories for what those features own.
struct SQLPushDeliveryStore: PushDeliveryStore {
    let database: any Database
    let outbox: any PushOutboxRepository
    let devices: any DeviceRepository
    let approvals: any ApprovalTransactionRepository
    let audit: AuditLog

    func claim(limit: Int, at date: Date, leaseUntil: Date) async throws -> [PushOutboxEntry] {
        try await outbox.claim(limit: limit, at: date, leaseUntil: leaseUntil, on: database)
    }

    func devices(ids: [String]) async throws -> [String: Device] {
        try await devices.find(ids: ids, on: database)
    }

    func undecided(requestIDs: [String]) async throws -> Set<String> {
        try await approvals.undecided(ids: requestIDs, on: database)
    }

    func notices(ids: [String]) async throws -> [String: SecurityNotice] {
        try await SQLSecurityNoticeRepository(live: nil).find(ids: ids, on: database)
    }

    func record(sent: [(id: String, providerMessageID: String?)], closed: [PushRowOutcome], at date: Date) async throws {
        try await database.transaction { executor in
            try await outbox.markSent(sent, at: date, on: executor)
            for outcome in closed {
                switch outcome {
                case .failed(let entry, let reason):
                    try await outbox.markFailed(id: entry.id, error: reason, at: date, on: executor)
                case .cancelled(let entry, let reason):
                    try await outbox.markCancelled(id: entry.id, reason: reason, at: date, on: executor)
                case .rescheduled(let entry, let next, let reason):
                    try await outbox.reschedule(id: entry.id, next: next, error: reason, at: date, on: executor)
                case .tokenRefused(let entry, let token, let reason, let since):
                    try await outbox.markFailed(id: entry.id, error: reason, at: date, on: executor)
                    if let token, try await devices.invalidatePushToken(
                        id: entry.deviceID, token: token, reason: reason, registeredBefore: since, at: date, on: executor) {
                        try await audit.record(
                            "device.push_token_invalidated", actor: "system", tenantID: entry.tenantID,
                            target: ("device", entry.deviceID),
                            details: ["provider": entry.provider.rawValue, "reason": reason], at: date, on: executor)
                    }
                }
            }
        }
    }
}
