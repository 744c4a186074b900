import CountersignCore
import Foundation

/// The recent activity the account page lists: the audit events about the user that a person
/// recognises (sign-ins, answers on the phone, changes to their phones), each with the client
/// and the address it came from where the log or the request recorded them.
struct AccountActivity: Sendable {
    /// How many events the page lists.
    static let limit = 20

    /// The actions listed, and how each reads.
    static let labels: [String: String] = [
        "session.created": "Signed in",
        "session.ended": "Signed out",
        "approval.approved": "Request approved",
        "approval.denied": "Request denied",
        NotRequestedReport.event: "Reported as not requested",
        "device.enrolled": "Phone enrolled",
        "device.renamed": "Phone renamed",
        "device.unenrolled": "Phone removed",
        "device.deleted": "Phone removed by an administrator",
        "enrollment_ticket.created": "Enrollment started",
        "passkey.registered": "Passkey added",
        "passkey.renamed": "Passkey renamed",
        "passkey.removed": "Passkey removed",
        "passkey.used": "Signed in with a passkey",
        "passkey.clone_warning": "A passkey's signature counter went backwards: it may have been copied",
        "recovery.codes_created": "Recovery codes made",
        "recovery.codes_revoked": "Recovery codes revoked by an administrator",
        "recovery.code_used": "Signed in with a recovery code",
        "recovery.access_pass_issued": "Temporary access pass issued by an administrator",
        "recovery.access_pass_used": "Signed in with a temporary access pass",
        "recovery.access_pass_revoked": "Temporary access pass revoked",
    ]

    static var actions: [String] { labels.keys.sorted() }

    let store: any AccountStore

    /// The user's latest events as the page shows them; `accountClient` names the account pages
    /// themselves, which are no stored client.
    func entries(userID: String, tenantID: String, accountClient: Client) async throws -> [ActivityEntry] {
        let events = try await store.activity(userID: userID, tenantID: tenantID, actions: Self.actions, limit: Self.limit)
        let approvalIDs = events.filter { $0.targetType == "approval" }.map(\.targetID)
        let requests = try await store.approvals(ids: approvalIDs)
        let reported = try await store.reported(approvalIDs: approvalIDs, tenantID: tenantID)
        let clientIDs = events.compactMap { $0.details["client_id"] } + requests.values.map(\.clientID)
        var clients = try await store.clientNames(ids: clientIDs.filter { $0 != accountClient.id }, tenantID: tenantID)
        clients[accountClient.id] = accountClient.name
        return events.map { event in
            let request = event.targetType == "approval" ? requests[event.targetID] : nil
            let clientID = event.details["client_id"] ?? request?.clientID
            let reportable = event.action == "approval.approved" && request?.status == .approved
                && request?.userID == userID && !reported.contains(event.targetID)
            return ActivityEntry(
                id: event.id, label: Self.label(event), time: AccountTime.text(event.occurredAt),
                timestamp: Timestamps.format(event.occurredAt),
                message: event.action.hasPrefix("approval.") ? request?.bindingMessage : nil,
                denial: event.action == "approval.denied" ? Self.denial(event, request: request) : nil,
                client: clientID.map { clients[$0] ?? $0 },
                ipAddress: Self.ipAddress(event, request: request), reportableApproval: reportable ? event.targetID : nil,
                reported: event.action == "approval.approved" && reported.contains(event.targetID))
        }
    }

    static func label(_ event: AuditEvent) -> String {
        let label = labels[event.action] ?? event.action
        switch event.action {
        case "device.enrolled", "device.renamed", "passkey.registered", "passkey.renamed":
            return event.details["name"].map { "\(label): \($0)" } ?? label
        case "passkey.removed":
            let by = event.actor.hasPrefix("admin-key:") ? " by an administrator" : ""
            return event.details["name"].map { "\(label)\(by): \($0)" } ?? label + by
        case NotRequestedReport.event:
            return label + (event.actor.hasPrefix("user:") ? " on this page" : " on your phone")
        default:
            return label
        }
    }

    /// Why a request was denied, in the words of the person who holds the phone: the reason
    /// the device signed (declined, cancelled, not requested) or the server found (the wrong
    /// number picked, the tenant's own check refusing it).
    static func denial(_ event: AuditEvent, request: ApprovalTransaction?) -> String {
        let reason = event.details["reason"].flatMap(DenyReason.init(rawValue:)) ?? request?.denyReason
        switch reason {
        case .declined: return "You declined it on your phone."
        case .cancelled: return "It was cancelled on the phone before it was answered."
        case .notRequested: return "You said on your phone that you did not request it."
        case .wrongNumber: return "The number picked on the phone was not the one shown on the screen, so it was refused."
        case .customRejected:
            let why = event.details["verifier_reason"].map { ": \($0)" } ?? ""
            return "The application's own check refused the answer\(why)."
        case nil: return "It was denied on the phone."
        }
    }

    /// The address the event came from: recorded in the event (a sign-in), or in the request
    /// it is about (an answer on the phone).
    static func ipAddress(_ event: AuditEvent, request: ApprovalTransaction?) -> String? {
        if let recorded = event.details["ip_address"], !recorded.isEmpty { return recorded }
        guard let request, let details = try? JSONValue(parsing: Data(request.details.utf8)),
              let address = details["context"]?["ip_address"]?.stringValue, !address.isEmpty else { return nil }
        return address
    }
}
