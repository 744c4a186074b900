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
    /// The audit log's reads: the user's activity, and which requests were reported.
    var events = SQLAuditRepository()

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
        let deviceIDs = try await devices.ids(userID: userID, on: database)
        return try await events.activity(
            tenantID: tenantID, userID: userID, deviceIDs: deviceIDs, actions: actions, limit: limit, on: database)
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
        try await events.targets(approvalIDs, ofType: "approval", withAction: NotRequestedReport.event, tenantID: tenantID, on: database)
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
            let earlier = try await events.targets(
                [transaction.id], ofType: "approval", withAction: NotRequestedReport.event, tenantID: transaction.tenantID,
                on: executor)
            guard earlier.isEmpty else { return false }
            try await notRequested.record(
                transaction, reportedBy: "user:\(transaction.userID)", deviceID: transaction.decidedByDevice,
                policy: policy, at: date, on: executor)
            return true
        }
    }
}
