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
        case passkeys
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
    }

    /// Throws the first member out of range, naming it. `publicOrigin` is where the server is
    /// reached, which passkeys' origins are checked against when the tenant sets no RP ID.
    func validated(publicOrigin: String) throws(AdminError) -> AuthenticationPolicy {
        for (field, value) in [("default_acr", defaultAcr), ("minimum_acr", minimumAcr)] {
            if let value, AuthenticationClass(urn: value) == nil {
                throw .invalidField(field, "must be one of \(AuthenticationClass.all.map(\.urn).joined(separator: ", "))")
            }
        }
        guard (1...10).contains(pinAttemptLimit) else { throw .invalidField("pin_attempt_limit", "must be 1 to 10") }
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
        var policy = self
        policy.passkeys = try passkeys.validated(publicOrigin: publicOrigin)
        return policy
    }

    /// What a request of `required` class tells the device, with `choices` for number matching.
    func verification(for required: AuthenticationClass, choices: [Int64]?) -> TransactionDetails.Verification {
        switch required.factor {
        case .confirm, .pin:
            return .init(factor: required.factor)
        case .numberMatch:
            return .init(factor: .numberMatch, numberMatch: NumberMatch(choices: numberMatchChoices ? choices : nil))
        case .biometric:
            return .init(factor: .biometric, pinFallback: biometricPINFallback)
        case .custom:
            return .init(factor: .custom, pinFallback: customPINFallback)
        }
    }
}
