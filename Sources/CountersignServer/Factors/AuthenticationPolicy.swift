import CountersignCore
import Foundation

/// A tenant's rules for how users approve: which class a request requires by default and at
/// least, how many wrong PINs end an enrollment, which fallbacks a PIN may stand in for, how
/// number matching looks, how often one user may be asked and one client may ask, and how
/// long "I did not request this" keeps further requests away. Stored as JSON with the tenant;
/// every member has a default, so an empty object is the default policy.
public struct AuthenticationPolicy: Codable, Sendable, Equatable {
    /// The class a request requires when the relying party asks for none.
    public var defaultAcr: String?
    /// No request requires less than this.
    public var minimumAcr: String?
    /// Wrong PINs in a row before the enrollment is removed.
    public var pinAttemptLimit: Int = 3
    /// Whether a PIN is accepted when a biometric check was required (biometrics unavailable
    /// or failed on the device).
    public var biometricPINFallback: Bool = true
    /// Whether a PIN is accepted when the custom authenticator was required.
    public var customPINFallback: Bool = true
    /// Number matching offers three numbers to pick from; false: the user types it.
    public var numberMatchChoices: Bool = true
    /// Requests one user may be sent per minute (0: no limit).
    public var userRequestsPerMinute: Int = 5
    /// `bc-authorize` requests one client may send per minute, unless the client has a limit of
    /// its own (0: no limit).
    public var clientRequestsPerMinute: Int = 600
    /// After "I did not request this", no request reaches that user for this many seconds (0: none).
    public var notRequestedSuppressionSeconds: Int = 900
    /// Whether devices may receive a TOTP seed for offline codes.
    public var totp: Bool = true
    /// Whether clients may receive tokens in CIBA push mode. Tokens pushed to an endpoint cannot
    /// be bound to the client that asked (FAPI-CIBA forbids the mode); a tenant can refuse it.
    public var pushDeliveryAllowed: Bool = true
    /// A browser session ends after this many seconds without a request (`BrowserSession`).
    public var sessionIdleSeconds: Int = 1800
    /// A browser session ends this many seconds after sign-in, however active.
    public var sessionMaxAgeSeconds: Int = 43200
    /// Passkey sign-in: the WebAuthn relying party's ID, origins and rules.
    public var passkeys = PasskeySettings()
    /// How users may reach each class, where the built-in rule is not wanted; nil: built-in
    /// for every class. A client's own policy takes precedence class by class.
    public var authenticators: AuthenticatorPolicy? = nil
    /// Factors the tenant does not use, by policy name (`custom` without a verifier, say). No
    /// alternative may name one, and a class left with no way to reach it is not offered.
    public var disabledFactors: [String] = []
    /// Seal request details with X-Wing (`HPKESuite.xwing`) to the devices that announced an
    /// X-Wing key; false: P-256 for every device.
    public var postQuantumSealing: Bool = true
    /// How many factors of their own, beyond the device key, an enrollment must bring: of the
    /// PIN and the biometric key, whose keys the server checks (0 to 2).
    public var minimumFactors: Int = 0
    /// The longest a `private_key_jwt` client assertion may be valid, in seconds (`exp` - `iat`):
    /// its `jti` is remembered that long, and a stolen one can be replayed at no other endpoint
    /// for no longer.
    public var clientAssertionMaximumLifetime: Int = 300
    /// What `clientAssertionMaximumLifetime` may be: a minute (the clocks' skew is 30 s) to a day.
    static let clientAssertionLifetimes = 60...86400
    /// Floors for the members of some groups: no request to a member requires less than the
    /// strongest floor of the groups they are in, whatever the client asks (`GroupMinimum`).
    public var groupMinimums: [GroupMinimum] = []
    /// The most groups `group_minimum_acr` names.
    static let maximumGroupMinimums = 50
    /// How many days the hosted sign-in may remember a browser for, for Countersign's own pages
    /// and each client that does not say (`Client.rememberBrowserDays`); 0: never.
    public var rememberedBrowserDays: Int = 0
    /// Rules run in order on every request for a user's approval (`RiskRule`); each that fires
    /// may raise what the request requires, refuse it, or only be recorded.
    public var riskRules: [RiskRule] = []
    /// Whether the risk rules act, or only record what they would have done.
    public var riskMode: RiskMode = .enforce

    /// How many days a sign-in to `client` may remember a browser for: the client's own number,
    /// else the tenant's.
    func rememberedBrowserDays(for client: Client) -> Int {
        client.rememberBrowserDays ?? rememberedBrowserDays
    }

    public init() {}

    enum CodingKeys: String, CodingKey {
        case totp
        case pushDeliveryAllowed = "push_delivery_allowed"
        case defaultAcr = "default_acr"
        case minimumAcr = "minimum_acr"
        case pinAttemptLimit = "pin_attempt_limit"
        case biometricPINFallback = "biometric_pin_fallback"
        case customPINFallback = "custom_pin_fallback"
        case numberMatchChoices = "number_match_choices"
        case userRequestsPerMinute = "user_requests_per_minute"
        case clientRequestsPerMinute = "client_requests_per_minute"
        case notRequestedSuppressionSeconds = "not_requested_suppression_seconds"
        case sessionIdleSeconds = "session_idle_seconds"
        case sessionMaxAgeSeconds = "session_max_age_seconds"
        case passkeys, authenticators
        case disabledFactors = "disabled_factors"
        case postQuantumSealing = "post_quantum_sealing"
        case minimumFactors = "minimum_factors"
        case clientAssertionMaximumLifetime = "client_assertion_max_lifetime_seconds"
        case groupMinimums = "group_minimum_acr"
        case rememberedBrowserDays = "remembered_browser_days"
        case riskRules = "risk_rules"
        case riskMode = "risk_mode"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = AuthenticationPolicy()
        defaultAcr = try container.decodeIfPresent(String.self, forKey: .defaultAcr)
        minimumAcr = try container.decodeIfPresent(String.self, forKey: .minimumAcr)
        pinAttemptLimit = try container.decodeIfPresent(Int.self, forKey: .pinAttemptLimit) ?? defaults.pinAttemptLimit
        biometricPINFallback = try container.decodeIfPresent(Bool.self, forKey: .biometricPINFallback)
            ?? defaults.biometricPINFallback
        customPINFallback = try container.decodeIfPresent(Bool.self, forKey: .customPINFallback) ?? defaults.customPINFallback
        numberMatchChoices = try container.decodeIfPresent(Bool.self, forKey: .numberMatchChoices)
            ?? defaults.numberMatchChoices
        userRequestsPerMinute = try container.decodeIfPresent(Int.self, forKey: .userRequestsPerMinute)
            ?? defaults.userRequestsPerMinute
        clientRequestsPerMinute = try container.decodeIfPresent(Int.self, forKey: .clientRequestsPerMinute)
            ?? defaults.clientRequestsPerMinute
        notRequestedSuppressionSeconds = try container.decodeIfPresent(Int.self, forKey: .notRequestedSuppressionSeconds)
            ?? defaults.notRequestedSuppressionSeconds
        totp = try container.decodeIfPresent(Bool.self, forKey: .totp) ?? defaults.totp
        pushDeliveryAllowed = try container.decodeIfPresent(Bool.self, forKey: .pushDeliveryAllowed)
            ?? defaults.pushDeliveryAllowed
        sessionIdleSeconds = try container.decodeIfPresent(Int.self, forKey: .sessionIdleSeconds) ?? defaults.sessionIdleSeconds
        sessionMaxAgeSeconds = try container.decodeIfPresent(Int.self, forKey: .sessionMaxAgeSeconds)
            ?? defaults.sessionMaxAgeSeconds
        passkeys = try container.decodeIfPresent(PasskeySettings.self, forKey: .passkeys) ?? defaults.passkeys
        authenticators = try container.decodeIfPresent(AuthenticatorPolicy.self, forKey: .authenticators)
        disabledFactors = try container.decodeIfPresent([String].self, forKey: .disabledFactors) ?? defaults.disabledFactors
        postQuantumSealing = try container.decodeIfPresent(Bool.self, forKey: .postQuantumSealing)
            ?? defaults.postQuantumSealing
        minimumFactors = try container.decodeIfPresent(Int.self, forKey: .minimumFactors) ?? defaults.minimumFactors
        clientAssertionMaximumLifetime = try container.decodeIfPresent(Int.self, forKey: .clientAssertionMaximumLifetime)
            ?? defaults.clientAssertionMaximumLifetime
        groupMinimums = try container.decodeIfPresent([GroupMinimum].self, forKey: .groupMinimums) ?? defaults.groupMinimums
        rememberedBrowserDays = try container.decodeIfPresent(Int.self, forKey: .rememberedBrowserDays)
            ?? defaults.rememberedBrowserDays
        riskRules = try container.decodeIfPresent([RiskRule].self, forKey: .riskRules) ?? defaults.riskRules
        riskMode = try container.decodeIfPresent(RiskMode.self, forKey: .riskMode) ?? defaults.riskMode
    }

    /// The factors the tenant has switched off; names that are no factor are left out (only a
    /// validated policy is stored).
    var switchedOff: Set<Factor> { Set(disabledFactors.compactMap(Factor.init(policyName:))) }

    /// Throws the first member out of range, naming it. `publicOrigin` is where the server is
    /// reached, which passkeys' origins are checked against when the tenant sets no RP ID.
    /// `metadata`: the server loads FIDO metadata (`PasskeySettings.validated`).
    func validated(publicOrigin: String, metadata: Bool = false) throws(AdminError) -> AuthenticationPolicy {
        for (field, value) in [("default_acr", defaultAcr), ("minimum_acr", minimumAcr)] {
            if let value, AuthenticationClass(urn: value) == nil {
                throw .invalidField(field, "must be one of \(AuthenticationClass.all.map(\.urn).joined(separator: ", "))")
            }
        }
        guard (1...10).contains(pinAttemptLimit) else { throw .invalidField("pin_attempt_limit", "must be 1 to 10") }
        guard (0...2).contains(minimumFactors) else {
            throw .invalidField("minimum_factors", "must be 0 to 2 (of the PIN and the biometric key)")
        }
        guard (0...1000).contains(userRequestsPerMinute) else {
            throw .invalidField("user_requests_per_minute", "must be 0 (no limit) to 1000")
        }
        guard Client.requestsPerMinuteRange.contains(clientRequestsPerMinute) else {
            throw .invalidField("client_requests_per_minute", "must be 0 (no limit) to \(Client.requestsPerMinuteRange.upperBound)")
        }
        guard (0...86400).contains(notRequestedSuppressionSeconds) else {
            throw .invalidField("not_requested_suppression_seconds", "must be 0 to 86400")
        }
        guard (60...86400).contains(sessionIdleSeconds) else { throw .invalidField("session_idle_seconds", "must be 60 to 86400") }
        guard (300...2_592_000).contains(sessionMaxAgeSeconds) else {
            throw .invalidField("session_max_age_seconds", "must be 300 to 2592000 (30 days)")
        }
        guard sessionIdleSeconds <= sessionMaxAgeSeconds else {
            throw .invalidField("session_idle_seconds", "must not exceed session_max_age_seconds")
        }
        guard (0...RememberedBrowser.maximumDays).contains(rememberedBrowserDays) else {
            throw .invalidField("remembered_browser_days", "must be 0 (never) to \(RememberedBrowser.maximumDays)")
        }
        guard Self.clientAssertionLifetimes.contains(clientAssertionMaximumLifetime) else {
            throw .invalidField("client_assertion_max_lifetime_seconds", "must be 60 to 86400 (a day)")
        }
        for name in disabledFactors where Factor(policyName: name) == nil {
            throw .invalidField("disabled_factors", "names the unknown factor \"\(name)\"; the factors are \(Factor.allCases.map(\.policyName).joined(separator: ", "))")
        }
        guard Set(disabledFactors).count == disabledFactors.count else {
            throw .invalidField("disabled_factors", "names a factor twice")
        }
        var policy = self
        policy.authenticators = try authenticators?.validated(
            field: "authenticators", switchedOff: switchedOff, passkeys: passkeys.enabled)
        for (field, value) in [("default_acr", defaultAcr), ("minimum_acr", minimumAcr)] {
            if let value, let named = AuthenticationClass(urn: value), policy.alternatives(for: named, client: nil).isEmpty {
                throw .invalidField(field, "\(value) cannot be reached from a phone: every alternative of it uses a factor in disabled_factors or is a passkey")
            }
        }
        guard groupMinimums.count <= Self.maximumGroupMinimums else {
            throw .invalidField("group_minimum_acr", "name at most \(Self.maximumGroupMinimums) groups")
        }
        for floor in groupMinimums {
            guard let named = AuthenticationClass(urn: floor.minimumAcr) else {
                throw .invalidField(
                    "group_minimum_acr", "the class of \(floor.group) must be one of \(AuthenticationClass.all.map(\.urn).joined(separator: ", "))")
            }
            guard !policy.alternatives(for: named, client: nil).isEmpty else {
                throw .invalidField("group_minimum_acr", "\(floor.minimumAcr) cannot be reached from a phone")
            }
        }
        guard AuthenticationClass.all.contains(where: { !policy.alternatives(for: $0, client: nil).isEmpty }) else {
            throw .invalidField("disabled_factors", "leaves no class that a user can reach")
        }
        policy.passkeys = try passkeys.validated(publicOrigin: publicOrigin, metadata: metadata)
        guard riskRules.count <= RiskRule.maximumRules else {
            throw .invalidField("risk_rules", "hold at most \(RiskRule.maximumRules) rules")
        }
        policy.riskRules = try riskRules.enumerated().map { index, rule throws(AdminError) in try rule.validated(index: index) }
        guard Set(riskRules.map(\.name)).count == riskRules.count else {
            throw .invalidField("risk_rules", "names a rule twice: each rule's name must be its own")
        }
        return policy
    }

    /// The ways a user may reach `authenticationClass` for `client`'s requests: the client's
    /// alternatives for the class, else the tenant's, else the built-in rule; without the
    /// alternatives that use a factor the tenant has switched off. Empty: the class cannot be
    /// reached (so also a built-in class whose own factor is switched off).
    func alternatives(for authenticationClass: AuthenticationClass, client: Client?) -> [[Factor]] {
        let off = switchedOff
        let configured = client?.authenticators?.alternatives(for: authenticationClass)
            ?? authenticators?.alternatives(for: authenticationClass)
        // Under the built-in rule the PIN stands in for the class's factor; with that factor
        // switched off there is nothing for it to stand in for.
        if configured == nil && off.contains(authenticationClass.factor) { return [] }
        let alternatives = configured ?? Self.builtIn(authenticationClass, fallback: pinFallback(for: authenticationClass))
        return alternatives.filter { $0.allSatisfy { !off.contains($0) } }
    }

    /// Whether a passkey sign-in reaches `authenticationClass` for `client`: where the client's
    /// or the tenant's alternatives name the class, when one of them is `passkey`; otherwise
    /// always (a passkey verifying its user meets every class). Never with passkeys switched off.
    func passkeyReaches(_ authenticationClass: AuthenticationClass, client: Client?) -> Bool {
        guard passkeys.enabled else { return false }
        return client?.authenticators?.acceptsPasskey(for: authenticationClass)
            ?? authenticators?.acceptsPasskey(for: authenticationClass) ?? true
    }

    /// Whether a PIN may stand in for the class's factor under the built-in rule.
    private func pinFallback(for authenticationClass: AuthenticationClass) -> Bool {
        switch authenticationClass.factor {
        case .biometric: biometricPINFallback
        case .custom: customPINFallback
        case .confirm, .numberMatch, .pin: false
        }
    }

    private static func builtIn(_ authenticationClass: AuthenticationClass, fallback: Bool) -> [[Factor]] {
        [[authenticationClass.factor]] + (fallback ? [[.pin]] : [])
    }

    /// Whether the policy names alternatives of its own for the class, for `client`: only then
    /// do the details carry them (version 3); the built-in rule keeps the form every device reads.
    private func isConfigured(_ authenticationClass: AuthenticationClass, client: Client?) -> Bool {
        client?.authenticators?.alternatives(for: authenticationClass) != nil
            || authenticators?.alternatives(for: authenticationClass) != nil
    }

    /// Whether a request of `required` class for `client` has a number for the user to match.
    func matchesNumber(_ required: AuthenticationClass, client: Client?) -> Bool {
        alternatives(for: required, client: client).contains { $0.contains(.numberMatch) }
    }

    /// What a request of `required` class tells the device, with `choices` for number matching:
    /// the policy's alternatives where it names some for the class, else the class's factor and
    /// whether the PIN may stand in.
    func verification(
        for required: AuthenticationClass, client: Client?, choices: [Int64]?
    ) -> TransactionDetails.Verification {
        let numberMatch = matchesNumber(required, client: client)
            ? NumberMatch(choices: numberMatchChoices ? choices : nil) : nil
        if isConfigured(required, client: client) {
            return .init(factor: required.factor, numberMatch: numberMatch,
                         alternatives: alternatives(for: required, client: client))
        }
        let fallback = pinFallback(for: required) && !switchedOff.contains(.pin)
        switch required.factor {
        case .confirm, .pin:
            return .init(factor: required.factor)
        case .numberMatch:
            return .init(factor: .numberMatch, numberMatch: numberMatch)
        case .biometric, .custom:
            return .init(factor: required.factor, pinFallback: fallback)
        }
    }
}

/// A floor for the members of one group: `{"group": "<id>", "minimum_acr": "<class>"}`. The
/// admin API takes the group by name or id and keeps the id (`GroupReferences`); the floor of a
/// group deleted since applies to nobody.
public struct GroupMinimum: Codable, Sendable, Equatable {
    public var group: String
    public var minimumAcr: String

    enum CodingKeys: String, CodingKey {
        case group
        case minimumAcr = "minimum_acr"
    }
}

extension AuthenticationPolicy {
    /// The strongest floor of the groups `groupIDs`, if any names one of them.
    func groupFloor(for groupIDs: Set<String>) -> AuthenticationClass? {
        groupMinimums.filter { groupIDs.contains($0.group) }.compactMap { AuthenticationClass(urn: $0.minimumAcr) }
            .max { $0.factor.strength < $1.factor.strength }
    }
}
