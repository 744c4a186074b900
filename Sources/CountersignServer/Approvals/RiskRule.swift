import Foundation

/// One of a tenant's risk rules (`AuthenticationPolicy.riskRules`): a signal Countersign already
/// keeps, its threshold, and what the request gets when the signal fires. Rules run in order on
/// every request for a user's approval (CIBA, the hosted sign-in, RADIUS, PAM), and each one
/// that fires is recorded with its reason; none lowers what the request requires.
///
/// ```json
/// {"name": "new network", "signal": "new_network", "days": 30, "action": "number_match"}
/// ```
public struct RiskRule: Codable, Sendable, Equatable {
    public enum Signal: String, Codable, Sendable, CaseIterable {
        /// The request comes from a network (an IPv4 /24, an IPv6 /48) from which the user
        /// approved no request in the last `days`.
        case newNetwork = "new_network"
        /// The user denied at least `count` requests in the last hour (an "I did not request
        /// this" is a denial).
        case recentDenials = "recent_denials"
        /// The user was sent at least `count` requests in the `minutes` before this one.
        case requestBurst = "request_burst"
        /// The request is from one of `clients`.
        case client
        /// The request asks for one of `acr` in its `acr_values`.
        case acr
        /// The request comes outside `from`–`to` in the time zone `zone`.
        case timeOfDay = "time_of_day"
        /// The request comes from a browser (its family and system, "Firefox on Linux": a new
        /// version of the same browser is no new browser) from which the user approved no
        /// request in the last `days`. Only the hosted sign-in knows the browser.
        case newUserAgent = "new_user_agent"
        /// None of the user's phones has reached the server in the last `days`: the user has
        /// not used Countersign for a while, and the request may not be theirs.
        case idleDevice = "idle_device"
    }

    public enum Action: String, Codable, Sendable, CaseIterable {
        /// The request requires number matching, or the stronger class it already required.
        case numberMatch = "number_match"
        /// The request requires a biometric check, or the stronger class it already required.
        case biometric
        /// The request is refused (`access_denied`, naming the rule and its reason).
        case deny
        /// Nothing changes but the record: the audit log, the request's details and `/metrics`.
        case notify
        /// A push cannot answer the request: the hosted sign-in asks for a passkey instead, and
        /// a CIBA or RADIUS request, which cannot use one, is refused naming the rule.
        case passkey
    }

    public var name: String
    public var signal: Signal
    public var action: Action
    public var days: Int?
    public var count: Int?
    public var minutes: Int?
    public var clients: [String]?
    public var acr: [String]?
    public var from: String?
    public var to: String?
    public var zone: String?

    public init(name: String, signal: Signal, action: Action) {
        self.name = name
        self.signal = signal
        self.action = action
    }

    /// The most rules a policy holds.
    static let maximumRules = 20
    /// How far back `new_network` looks: decided requests are kept 30 days
    /// (`ApprovalService.decidedRetention`).
    static let days = 1...30

    /// Throws the first member that does not suit the signal, naming it as `risk_rules[<index>]`.
    func validated(index: Int) throws(AdminError) -> RiskRule {
        let field = "risk_rules[\(index)]"
        func require<Value>(_ value: Value?, _ member: String, _ rule: String, _ ok: (Value) -> Bool) throws(AdminError) {
            guard let value, ok(value) else { throw .invalidField("\(field).\(member)", rule) }
        }
        func refuse(_ members: [(String, Bool)]) throws(AdminError) {
            for (member, present) in members where present {
                throw .invalidField("\(field).\(member)", "is not a member of a \(signal.rawValue) rule")
            }
        }
        guard !name.isEmpty, name.count <= 64 else { throw .invalidField("\(field).name", "must be 1 to 64 characters") }
        switch signal {
        case .newNetwork, .newUserAgent:
            try require(days, "days", "must be 1 to 30: decided requests are kept 30 days") { Self.days.contains($0) }
            try refuse([("count", count != nil), ("minutes", minutes != nil), ("clients", clients != nil), ("acr", acr != nil),
                        ("from", from != nil), ("to", to != nil), ("zone", zone != nil)])
        case .idleDevice:
            try require(days, "days", "must be 1 to 365") { (1...365).contains($0) }
            try refuse([("count", count != nil), ("minutes", minutes != nil), ("clients", clients != nil), ("acr", acr != nil),
                        ("from", from != nil), ("to", to != nil), ("zone", zone != nil)])
        case .recentDenials:
            try require(count, "count", "must be 1 to 100") { (1...100).contains($0) }
            try refuse([("days", days != nil), ("minutes", minutes != nil), ("clients", clients != nil), ("acr", acr != nil),
                        ("from", from != nil), ("to", to != nil), ("zone", zone != nil)])
        case .requestBurst:
            try require(count, "count", "must be 1 to 1000") { (1...1000).contains($0) }
            try require(minutes, "minutes", "must be 1 to 1440") { (1...1440).contains($0) }
            try refuse([("days", days != nil), ("clients", clients != nil), ("acr", acr != nil), ("from", from != nil),
                        ("to", to != nil), ("zone", zone != nil)])
        case .client:
            try require(clients, "clients", "must name 1 to 100 clients") { (1...100).contains($0.count) }
            try refuse([("days", days != nil), ("count", count != nil), ("minutes", minutes != nil), ("acr", acr != nil),
                        ("from", from != nil), ("to", to != nil), ("zone", zone != nil)])
        case .acr:
            try require(acr, "acr", "must name 1 to 10 classes") { (1...10).contains($0.count) }
            for value in acr ?? [] where AuthenticationClass(urn: value) == nil {
                throw .invalidField("\(field).acr", "\(value) is not one of \(AuthenticationClass.all.map(\.urn).joined(separator: ", "))")
            }
            try refuse([("days", days != nil), ("count", count != nil), ("minutes", minutes != nil), ("clients", clients != nil),
                        ("from", from != nil), ("to", to != nil), ("zone", zone != nil)])
        case .timeOfDay:
            try require(from, "from", "must be a time of day as HH:MM") { RiskClock.minutes($0) != nil }
            try require(to, "to", "must be a time of day as HH:MM") { RiskClock.minutes($0) != nil }
            try require(zone, "zone", "must be an IANA time zone, such as Europe/Berlin") { TimeZone(identifier: $0) != nil }
            guard from != to else { throw .invalidField("\(field).to", "must differ from from") }
            try refuse([("days", days != nil), ("count", count != nil), ("minutes", minutes != nil), ("clients", clients != nil),
                        ("acr", acr != nil)])
        }
        return self
    }
}

/// Whether a tenant's risk rules act, or only record what they would have done.
public enum RiskMode: String, Codable, Sendable, CaseIterable {
    case enforce
    /// Each rule that fires is recorded (audit log, `/metrics`) and changes nothing.
    case dryRun = "dry_run"
}

/// Times of day as risk rules name them.
enum RiskClock {
    /// Minutes since midnight of `HH:MM` (00:00 to 23:59); nil for anything else.
    static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let hours = Int(parts[0]), let minutes = Int(parts[1]), (0...23).contains(hours), (0...59).contains(minutes)
        else { return nil }
        return hours * 60 + minutes
    }

    /// `date` as `HH:MM` in `zone`, and its minutes since midnight there.
    static func local(_ date: Date, in zone: TimeZone) -> (text: String, minutes: Int) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        let (hours, minutes) = (parts.hour ?? 0, parts.minute ?? 0)
        return (String(format: "%02d:%02d", hours, minutes), hours * 60 + minutes)
    }

    /// Whether `minute` of the day falls within `from` up to (not including) `to`; a span that
    /// passes midnight (22:00–06:00) wraps.
    static func within(_ minute: Int, from: Int, to: Int) -> Bool {
        from < to ? (from..<to).contains(minute) : (minute >= from || minute < to)
    }
}
