import CountersignCore
import Foundation

/// "I did not request this": a denial that reports possible fraud, or push fatigue at work. In
/// the transaction that records the denial it is audited, queued for the tenant's event
/// webhook, and — per the tenant's policy — keeps further requests away from the user for a
/// while, so that whoever is sending them cannot wear the user down.
struct NotRequestedReport: Sendable {
    static let event = "approval.not_requested"

    let users: any UserRepository
    let audit: AuditLog
    let events: TenantEvents

    func record(_ transaction: ApprovalTransaction, device: Device, policy: AuthenticationPolicy, at date: Date,
                on executor: any SQLExecutor) async throws {
        try await record(transaction, reportedBy: "device:\(device.id)", deviceID: device.id, policy: policy, at: date,
                         on: executor)
    }

    /// The report made by `actor`: the device answering the request, or the user on the account
    /// page about a request that was approved (`deviceID` is then the device that approved it).
    func record(_ transaction: ApprovalTransaction, reportedBy actor: String, deviceID: String?,
                policy: AuthenticationPolicy, at date: Date, on executor: any SQLExecutor) async throws {
        var details = ["client_id": transaction.clientID, "user_id": transaction.userID]
        if let deviceID { details["device_id"] = deviceID }
        if policy.notRequestedSuppressionSeconds > 0 {
            let until = date.addingTimeInterval(TimeInterval(policy.notRequestedSuppressionSeconds))
            try await users.suppressRequests(userID: transaction.userID, until: until, on: executor)
            details["requests_suppressed_until"] = Timestamps.format(until)
        }
        try await audit.record(
            Self.event, actor: actor, tenantID: transaction.tenantID, target: ("approval", transaction.id),
            details: details, at: date, on: executor)
        let user = try await users.find(id: transaction.userID, tenantID: transaction.tenantID,
                                                              on: executor)
        var data: [String: JSONValue] = [
            "request_id": .string(transaction.id), "user_id": .string(transaction.userID),
            "client_id": .string(transaction.clientID), "decided_at": .string(Timestamps.format(date)),
        ]
        if let deviceID { data["device_id"] = .string(deviceID) }
        if let user { data["username"] = .string(user.username) }
        if let until = details["requests_suppressed_until"] { data["requests_suppressed_until"] = .string(until) }
        try await events.enqueue(
            event: Self.event, payload: JSONValue.object(data), tenantID: transaction.tenantID, at: date, on: executor)
    }
}
