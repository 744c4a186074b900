import CountersignCore
import Foundation

/// What the account pages (`AccountFlow`) read and write, and nothing else: the signed-in user,
/// their devices and enrollment tickets, the audit events about them, and the requests those
/// events name. Each change is one transaction with its audit record, made as `user:<id>`.
protocol AccountStore: Sendable {
    /// The user, if it still exists in the tenant.
    func user(id: String, tenantID: String) async throws -> User?
    /// The user's active devices, oldest first.
    func devices(userID: String) async throws -> [Device]
    func device(id: String) async throws -> Device?
    /// Renames the device and records it as done by the user.
    func rename(deviceID: String, to name: String, by userID: String, tenantID: String, at date: Date) async throws
    /// Deletes the device, recorded as unenrolled by the user; false if it was not active.
    func remove(deviceID: String, by userID: String, tenantID: String, at date: Date) async throws -> Bool
    func ticket(id: String) async throws -> EnrollmentTicket?
    /// The newest `limit` events of `actions` about the user: done by the user, to the user or
    /// to one of their devices, or naming the user (`user_id`) in their details.
    func activity(userID: String, tenantID: String, actions: [String], limit: Int) async throws -> [AuditEvent]
    /// The requests with these ids that still exist, by id.
    func approvals(ids: [String]) async throws -> [String: ApprovalTransaction]
    func approval(id: String) async throws -> ApprovalTransaction?
    /// Which of these requests were reported as not requested, by a device or the user.
    func reported(approvalIDs: [String], tenantID: String) async throws -> Set<String>
    /// The names of the tenant's clients with these ids that exist, by id.
    func clientNames(ids: [String], tenantID: String) async throws -> [String: String]
    /// Reports the request as not requested by its user, with everything a device's report does
    /// (`NotRequestedReport`); false, with nothing recorded, if it was reported before.
    func reportNotRequested(_ transaction: ApprovalTransaction, policy: AuthenticationPolicy, at date: Date) async throws
        -> Bool
}

/// The account pages' store on the server's database (SQLite or PostgreSQL).
struct SQLAccountStore: AccountStore {
    let database: any Database
    let users: any UserRepository
    let devices: any DeviceRepository
    let tickets: any EnrollmentTicketRepository
    let approvals: any ApprovalTransactionRepository
    let clients: any ClientRepository
    let audit: AuditLog
    let notRequested: NotRequestedReport

    /// A user has a handful of phones; the page lists at most this many.
    static let deviceLimit = 100

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func devices(userID: String) async throws -> [Device] {
        try await devices.list(userID: userID, after: nil, limit: Self.deviceLimit, on: database)
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    func device(id: String) async throws -> Device? {
        try await devices.find(id: id, on: database)
    }

    func rename(deviceID: String, to name: String, by userID: String, tenantID: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await devices.rename(id: deviceID, to: name, at: date, on: executor)
            try await audit.record(
                "device.renamed", actor: "user:\(userID)", tenantID: tenantID, target: ("device", deviceID),
                details: ["name": name], at: date, on: executor)
        }
    }

    func remove(deviceID: String, by userID: String, tenantID: String, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            guard try await devices.markDeleted(id: deviceID, at: date, on: executor) else { return false }
            try await audit.record(
                "device.unenrolled", actor: "user:\(userID)", tenantID: tenantID, target: ("device", deviceID),
                at: date, on: executor)
            return true
        }
    }

    func ticket(id: String) async throws -> EnrollmentTicket? {
        try await tickets.find(id: id, on: database)
    }

    func activity(userID: String, tenantID: String, actions: [String], limit: Int) async throws -> [AuditEvent] {
        // Details are canonical JSON (sorted keys, no spaces), so the user's id appears in them
        // exactly as `"user_id":"<id>"`; `!` escapes LIKE's wildcards, which ids may contain (`_`).
        let escaped = userID.replacingOccurrences(of: "!", with: "!!").replacingOccurrences(of: "%", with: "!%")
            .replacingOccurrences(of: "_", with: "!_")
        let naming = "%\"user_id\":\"\(escaped)\"%"
        let events = try await database.all(
            """
            SELECT \(raw: AuditEventRow.columns) FROM audit_events
            WHERE tenant_id = \(tenantID) AND action IN (\(list: actions))
                AND (actor = \("user:\(userID)") OR (target_type = 'user' AND target_id = \(userID))
                    OR details LIKE \(naming) ESCAPE '!'
                    OR (target_type = 'device' AND target_id IN (SELECT id FROM devices WHERE user_id = \(userID))))
            ORDER BY id DESC LIMIT \(limit)
            """, as: AuditEventRow.self
        ).map { try $0.event() }
        // The pattern only narrows; the details themselves decide.
        return events.filter { event in
            event.details["user_id"].map { $0 == userID } ?? true
        }
    }

    func approvals(ids: [String]) async throws -> [String: ApprovalTransaction] {
        var found: [String: ApprovalTransaction] = [:]
        for id in Set(ids) {
            if let transaction = try await approvals.find(id: id, on: database) { found[id] = transaction }
        }
        return found
    }

    func approval(id: String) async throws -> ApprovalTransaction? {
        try await approvals.find(id: id, on: database)
    }

    func reported(approvalIDs: [String], tenantID: String) async throws -> Set<String> {
        Set(try await database.run(chunking: Array(Set(approvalIDs))) { part in
            """
            SELECT target_id FROM audit_events
            WHERE tenant_id = \(tenantID) AND action = \(NotRequestedReport.event) AND target_type = 'approval'
                AND target_id IN (\(list: part))
            """
        }.map { try $0.decode(column: "target_id", as: String.self) })
    }

    func clientNames(ids: [String], tenantID: String) async throws -> [String: String] {
        var names: [String: String] = [:]
        for id in Set(ids) {
            if let client = try await clients.find(id: id, tenantID: tenantID, on: database) { names[id] = client.name }
        }
        return names
    }

    func reportNotRequested(_ transaction: ApprovalTransaction, policy: AuthenticationPolicy, at date: Date) async throws
        -> Bool {
        try await database.transaction { executor in
            // The user's row is locked first, so that two reports sent at once record one.
            try await users.lockForRequest(userID: transaction.userID, on: executor)
            let earlier = try await executor.first(
                """
                SELECT id FROM audit_events
                WHERE tenant_id = \(transaction.tenantID) AND action = \(NotRequestedReport.event)
                    AND target_type = 'approval' AND target_id = \(transaction.id)
                LIMIT 1
                """, column: "id", as: String.self)
            guard earlier == nil else { return false }
            try await notRequested.record(
                transaction, reportedBy: "user:\(transaction.userID)", deviceID: transaction.decidedByDevice,
                policy: policy, at: date, on: executor)
            return true
        }
    }
}
