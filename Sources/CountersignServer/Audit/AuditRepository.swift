import CountersignCore
import Foundation

public protocol AuditRepository: Sendable {
    func append(_ event: AuditEvent, on executor: any SQLExecutor) async throws
    /// Newest first. `tenantID` nil lists every tenant's events (system keys only).
    func list(tenantID: String?, before cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [AuditEvent]
    /// Newest first, only the events `filter` keeps.
    func list(tenantID: String?, filter: AuditFilter, before cursor: String?, limit: Int,
              on executor: any SQLExecutor) async throws -> [AuditEvent]
}

public struct SQLAuditRepository: AuditRepository {
    public init() {}

    private typealias Row = AuditEventRow

    public func append(_ event: AuditEvent, on executor: any SQLExecutor) async throws {
        let details = JSONValue.object(event.details.mapValues(JSONValue.string)).canonicalString
        try await executor.run(
            """
            INSERT INTO audit_events (id, tenant_id, actor, action, target_type, target_id, details, occurred_at)
            VALUES (\(event.id), \(event.tenantID), \(event.actor), \(event.action), \(event.targetType),
                \(event.targetID), \(details), \(event.occurredAt))
            """)
    }

    public func list(tenantID: String?, before cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [AuditEvent] {
        // "~" sorts after every identifier character, so it stands for "from the newest".
        let upper = cursor ?? "~"
        let statement: SQLStatement = if let tenantID {
            """
            SELECT \(raw: Row.columns) FROM audit_events
            WHERE tenant_id = \(tenantID) AND id < \(upper) ORDER BY id DESC LIMIT \(limit)
            """
        } else {
            "SELECT \(raw: Row.columns) FROM audit_events WHERE id < \(upper) ORDER BY id DESC LIMIT \(limit)"
        }
        return try await executor.all(statement, as: Row.self).map { try $0.event() }
    }

    public func list(tenantID: String?, filter: AuditFilter, before cursor: String?, limit: Int,
                     on executor: any SQLExecutor) async throws -> [AuditEvent] {
        guard filter != .none else { return try await list(tenantID: tenantID, before: cursor, limit: limit, on: executor) }
        // One statement for every combination: an absent member is '' and matches everything.
        let (action, actor) = (filter.action ?? "", filter.actor ?? "")
        let (user, client, device) = (filter.userID ?? "", filter.clientID ?? "", filter.deviceID ?? "")
        let since = filter.since ?? Date(timeIntervalSince1970: 0)
        let until = filter.until ?? Date(timeIntervalSince1970: 253_402_300_799)
        let statement: SQLStatement =
            """
            SELECT \(raw: Row.columns) FROM audit_events
            WHERE (\(tenantID ?? "") = '' OR tenant_id = \(tenantID ?? "")) AND id < \(cursor ?? "~")
              AND (\(action) = '' OR action = \(action)) AND (\(actor) = '' OR actor = \(actor))
              AND (\(user) = '' OR (target_type = 'user' AND target_id = \(user))
                   OR details LIKE \(AuditFilter.detailsPattern("user_id", filter.userID)) ESCAPE '\\')
              AND (\(client) = '' OR (target_type = 'client' AND target_id = \(client))
                   OR details LIKE \(AuditFilter.detailsPattern("client_id", filter.clientID)) ESCAPE '\\')
              AND (\(device) = '' OR (target_type = 'device' AND target_id = \(device))
                   OR details LIKE \(AuditFilter.detailsPattern("device_id", filter.deviceID)) ESCAPE '\\')
              AND occurred_at >= \(since) AND occurred_at < \(until)
            ORDER BY id DESC LIMIT \(limit)
            """
        return try await executor.all(statement, as: Row.self).map { try $0.event() }
    }

    /// The tenant's events with one of `actions` that concern a user: done by them, about them,
    /// naming them in their details, or about one of `deviceIDs` (the user's devices), newest
    /// first.
    func activity(
        tenantID: String, userID: String, deviceIDs: [String], actions: [String], limit: Int, on executor: any SQLExecutor
    ) async throws -> [AuditEvent] {
        // Details are canonical JSON (sorted keys, no spaces), so the user's id appears in them
        // exactly as `"user_id":"<id>"`; `!` escapes LIKE's wildcards, which ids may contain (`_`).
        let escaped = userID.replacingOccurrences(of: "!", with: "!!").replacingOccurrences(of: "%", with: "!%")
            .replacingOccurrences(of: "_", with: "!_")
        let naming = "%\"user_id\":\"\(escaped)\"%"
        // A user without devices: an id no device has.
        let devices = deviceIDs.isEmpty ? [""] : deviceIDs
        let events = try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM audit_events
            WHERE tenant_id = \(tenantID) AND action IN (\(list: actions))
                AND (actor = \("user:\(userID)") OR (target_type = 'user' AND target_id = \(userID))
                    OR details LIKE \(naming) ESCAPE '!'
                    OR (target_type = 'device' AND target_id IN (\(list: devices))))
            ORDER BY id DESC LIMIT \(limit)
            """, as: Row.self
        ).map { try $0.event() }
        // The pattern only narrows; the details themselves decide.
        return events.filter { event in
            event.details["user_id"].map { $0 == userID } ?? true
        }
    }

    /// Which of `targetIDs` (of `targetType`) have an event with `action` in the tenant.
    func targets(
        _ targetIDs: [String], ofType targetType: String, withAction action: String, tenantID: String,
        on executor: any SQLExecutor
    ) async throws -> Set<String> {
        Set(try await executor.run(chunking: Array(Set(targetIDs))) { part in
            """
            SELECT target_id FROM audit_events
            WHERE tenant_id = \(tenantID) AND action = \(action) AND target_type = \(targetType)
                AND target_id IN (\(list: part))
            """
        }.map { try $0.decode(column: "target_id", as: String.self) })
    }
}

/// A row of `audit_events` as stored: decoded by column name, then turned into an
/// `AuditEvent` (its details parsed).
struct AuditEventRow: Decodable {
    /// The columns `CodingKeys` names, for `SELECT`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var tenantID: String?
    var actor: String
    var action: String
    var targetType: String
    var targetID: String
    /// A JSON object of strings.
    var details: String
    var occurredAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case actor, action
        case targetType = "target_type"
        case targetID = "target_id"
        case details
        case occurredAt = "occurred_at"
    }

    func event() throws -> AuditEvent {
        AuditEvent(
            id: id, tenantID: tenantID, actor: actor, action: action, targetType: targetType, targetID: targetID,
            details: try JSONDecoder().decode([String: String].self, from: Data(details.utf8)), occurredAt: occurredAt)
    }
}
