import CountersignCore
import Foundation

/// A risk rule that fired for one request: which, what it does, and why, in words the user,
/// the audit log and the relying party read ("new network: 203.0.113.0/24").
struct RiskFinding: Sendable, Equatable, Codable {
    let rule: String
    let action: RiskRule.Action
    let reason: String
}

/// What the risk rules read of a user's recent requests (`ApprovalStore`).
protocol RiskSignalSource: Sendable {
    /// Whether the user approved a request from `network` (`IPNetwork.riskNetwork`) since `date`.
    func approvedFrom(network: String, userID: String, since date: Date) async throws -> Bool
    /// How many of the user's requests were denied since `date`.
    func denials(userID: String, since date: Date) async throws -> Int
    /// How many requests the user was sent since `date`.
    func requests(userID: String, since date: Date) async throws -> Int
    /// Whether the user approved a request from a browser of `agent` (`UserAgentFamily`) since `date`.
    func approvedFrom(agent: String, userID: String, since date: Date) async throws -> Bool
    /// When one of the user's active phones last reached the server (or enrolled, if none did since).
    func lastDeviceActivity(userID: String) async throws -> Date?
}

/// Runs a tenant's risk rules, in order, on one request for a user's approval.
struct RiskEvaluation: Sendable {
    let rules: [RiskRule]
    let signals: any RiskSignalSource

    /// The rules that fire for `request` at `date`, each with its reason. A signal that needs
    /// what the request does not carry (an address) does not fire.
    func findings(for request: NewApproval, at date: Date) async throws -> [RiskFinding] {
        var findings: [RiskFinding] = []
        for rule in rules {
            if let reason = try await reason(rule, request: request, at: date) {
                findings.append(RiskFinding(rule: rule.name, action: rule.action, reason: reason))
            }
        }
        return findings
    }

    private func reason(_ rule: RiskRule, request: NewApproval, at date: Date) async throws -> String? {
        let user = request.user.id
        switch rule.signal {
        case .newNetwork:
            guard let days = rule.days, let address = request.context.ipAddress,
                let network = IPNetwork.riskNetwork(of: address)?.description
            else { return nil }
            let since = date.addingTimeInterval(-TimeInterval(days) * 86_400)
            return try await signals.approvedFrom(network: network, userID: user, since: since) ? nil : "new network: \(network)"
        case .recentDenials:
            guard let count = rule.count else { return nil }
            let denied = try await signals.denials(userID: user, since: date.addingTimeInterval(-3600))
            return denied >= count ? "\(denied) denied \(denied == 1 ? "request" : "requests") in the last hour" : nil
        case .requestBurst:
            guard let count = rule.count, let minutes = rule.minutes else { return nil }
            let sent = try await signals.requests(userID: user, since: date.addingTimeInterval(-TimeInterval(minutes) * 60))
            return sent >= count ? "\(sent) \(sent == 1 ? "request" : "requests") in \(minutes) \(minutes == 1 ? "minute" : "minutes")" : nil
        case .client:
            return rule.clients?.contains(request.client.id) == true ? "client \(request.client.name) is marked sensitive" : nil
        case .acr:
            guard let asked = request.acrValues?.values.first(where: { rule.acr?.contains($0) == true }) else { return nil }
            return "asks for \(asked)"
        case .newUserAgent:
            guard let days = rule.days, let agent = request.context.userAgent.flatMap(UserAgentFamily.init(userAgent:))?.name
            else { return nil }
            let since = date.addingTimeInterval(-TimeInterval(days) * 86_400)
            return try await signals.approvedFrom(agent: agent, userID: user, since: since) ? nil : "new browser: \(agent)"
        case .idleDevice:
            guard let days = rule.days, let last = try await signals.lastDeviceActivity(userID: user) else { return nil }
            // Whole seconds first: times come back from the database in whole milliseconds.
            let idle = Int(date.timeIntervalSince(last).rounded() / 86_400)
            return idle >= days ? "no phone used in \(idle) days" : nil
        case .timeOfDay:
            guard let from = rule.from.flatMap(RiskClock.minutes), let to = rule.to.flatMap(RiskClock.minutes),
                let zone = rule.zone.flatMap(TimeZone.init(identifier:))
            else { return nil }
            let local = RiskClock.local(date, in: zone)
            guard !RiskClock.within(local.minutes, from: from, to: to) else { return nil }
            return "outside \(rule.from ?? "")–\(rule.to ?? "") \(zone.identifier) (it is \(local.text))"
        }
    }
}

extension NewApproval {
    /// The request as the risk rules' enforcing findings leave it: refused by the first `deny`,
    /// else its class raised to each escalation's (never lowered).
    func escalated(by findings: [RiskFinding], policy: AuthenticationPolicy) throws(ApprovalStartError) -> NewApproval {
        if let denial = findings.first(where: { $0.action == .deny }) {
            throw .riskDenied(rule: denial.rule, reason: denial.reason)
        }
        if let passkey = findings.first(where: { $0.action == .passkey }) {
            throw .riskRequiresPasskey(rule: passkey.rule, reason: passkey.reason)
        }
        var request = self
        for finding in findings {
            let floor: AuthenticationClass? = switch finding.action {
            case .numberMatch: AuthenticationClass(factor: .numberMatch)
            case .biometric: AuthenticationClass(factor: .biometric)
            case .deny, .notify, .passkey: nil
            }
            request.required = request.required.raised(to: floor, client: client, policy: policy)
        }
        return request
    }
}
