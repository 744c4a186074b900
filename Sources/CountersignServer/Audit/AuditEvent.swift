import CountersignCore
import Foundation

/// One entry of the audit log: who did what to which record, when. Written in the same
/// transaction as the change it records, so the log never misses a change nor records one that
/// was rolled back. Details never hold secrets.
public struct AuditEvent: Sendable, Equatable, Codable {
    public var id: String
    public var tenantID: String?
    /// `admin-key:<id>`, `device:<id>`, `client:<id>` (a relying party), `system` or `recovery`.
    public var actor: String
    public var action: String
    public var targetType: String
    public var targetID: String
    public var details: [String: String]
    public var occurredAt: Date

    enum CodingKeys: String, CodingKey {
        case id, actor, action, details
        case tenantID = "tenant_id"
        case targetType = "target_type"
        case targetID = "target_id"
        case occurredAt = "occurred_at"
    }
}

/// Writes audit events; the one place that builds them. With `signals`, each event that says
/// something about a user is also queued, in the same transaction, for the tenant's Shared
/// Signals receivers.
public struct AuditLog: Sendable {
    let repository: any AuditRepository
    let signals: SharedSignals?

    public init(repository: any AuditRepository = SQLAuditRepository()) { self.init(repository: repository, signals: nil) }

    init(repository: any AuditRepository, signals: SharedSignals?) {
        self.repository = repository
        self.signals = signals
    }

    public func record(
        _ action: String, actor: String, tenantID: String?, target: (type: String, id: String),
        details: [String: String] = [:], at date: Date, on executor: any SQLExecutor
    ) async throws {
        try await append(
            Self.event(action, actor: actor, tenantID: tenantID, target: target, details: details, at: date), on: executor)
    }

    /// The event `record` writes, for a caller that builds it before the transaction it is
    /// written in (`DecisionEffects`).
    static func event(
        _ action: String, actor: String, tenantID: String?, target: (type: String, id: String),
        details: [String: String] = [:], at date: Date
    ) -> AuditEvent {
        AuditEvent(id: Identifier.make("evt", at: date), tenantID: tenantID, actor: actor, action: action,
                   targetType: target.type, targetID: target.id, details: details, occurredAt: date)
    }

    /// Writes an event built beforehand (`event`).
    func append(_ event: AuditEvent, on executor: any SQLExecutor) async throws {
        try await repository.append(event, on: executor)
        try await signals?.record(event, on: executor)
    }
}
