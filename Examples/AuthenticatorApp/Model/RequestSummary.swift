import CountersignCore
import CountersignKit
import Foundation

/// What the approval screen shows of a request, from the details the SDK opened and checked
/// (`CountersignAuthenticator.details(for:)`): nothing here comes from the push, which carries
/// identifiers only.
///
/// ```swift
/// let summary = RequestSummary(details)
/// titleLabel.text = summary.title
/// for row in summary.rows { stack.addArrangedSubview(RowView(row.label, row.value)) }
/// ```
public struct RequestSummary: Sendable, Equatable {
    public struct Row: Sendable, Equatable {
        public let label: String
        public let value: String

        public init(label: String, value: String) {
            self.label = label
            self.value = value
        }
    }

    /// One way of saying no, as the approval screen offers it.
    public struct Refusal: Sendable, Equatable {
        public let title: String
        public let explanation: String
        /// What the device signs (`declined` or `not_requested`).
        public let reason: DenyReason
    }

    public let title: String
    /// The relying party's binding message, shown large so the user compares it with their screen.
    public let bindingMessage: String?
    public let rows: [Row]
    public let expiresAt: Date

    /// Deny, and "this wasn't me": the second reports the request to the organisation as possible fraud.
    public static let refusals = [
        Refusal(title: "Deny", explanation: "I don't want to approve this now.", reason: .declined),
        Refusal(title: "This wasn't me",
                explanation: "I didn't start this. Your organisation is told, and the request is denied.",
                reason: .notRequested),
    ]

    public init(_ details: RequestDetails) {
        title = "\(details.clientName) asks you to approve"
        bindingMessage = details.bindingMessage
        var rows = [Row(label: "Account", value: details.username), Row(label: "Application", value: details.clientName)]
        if let address = details.ipAddress { rows.append(Row(label: "From", value: address)) }
        if let agent = details.transaction.context.userAgent { rows.append(Row(label: "Browser", value: Self.browser(agent))) }
        if !details.riskReasons.isEmpty {
            rows.append(Row(label: "Why this asks more", value: details.riskReasons.joined(separator: "; ")))
        }
        let access = details.scope.filter { $0 != "openid" }
        if !access.isEmpty { rows.append(Row(label: "Access", value: access.joined(separator: ", "))) }
        if !details.authorizationDetails.isEmpty {
            rows.append(Row(label: "Details", value: "\(details.authorizationDetails.count) item\(details.authorizationDetails.count == 1 ? "" : "s") to approve"))
        }
        self.rows = rows
        expiresAt = Date(timeIntervalSince1970: TimeInterval(details.transaction.expiresAt))
    }

    /// "Expires in 2:05", or "Expired".
    public func countdown(at now: Date) -> String {
        let left = Int(expiresAt.timeIntervalSince(now).rounded(.down))
        guard left > 0 else { return "Expired" }
        return "Expires in \(left / 60):\(String(format: "%02d", left % 60))"
    }

    /// The browser's family from a user agent, or the agent itself when it names none known.
    static func browser(_ agent: String) -> String {
        for (marker, name) in [("Edg/", "Edge"), ("Firefox/", "Firefox"), ("Chrome/", "Chrome"), ("Safari/", "Safari")]
        where agent.contains(marker) {
            return name
        }
        return String(agent.prefix(60))
    }
}
