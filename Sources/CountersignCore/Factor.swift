import Crypto
import Foundation

/// How the user proves it is them on the device, beyond holding the device key. Each is a wire
/// name in `TransactionDetails.Verification.factor` and in `ApprovalResponse.factors`.
///
/// - `confirm`: the user looked at the request and tapped approve.
/// - `numberMatch`: the user picked (or typed) the number the relying party shows.
/// - `pin`: a PIN turned into a key on the device; only the server can tell whether it was
///   right (`PINProof`).
/// - `biometric`: a second device key that the platform releases only after a biometric check.
/// - `custom`: the app's own authenticator; the tenant's verifier judges its data.
public enum Factor: String, Codable, Sendable, CaseIterable, Comparable {
    case confirm
    case numberMatch = "number_match"
    case pin
    case biometric
    case custom

    /// How strong a factor counts as when a requirement is compared with an answer: a factor of
    /// at least the required strength satisfies it (a PIN satisfies a request for a tap), with
    /// the exception that a PIN stands in for a biometric or custom check only where the policy
    /// allows the fallback.
    public var strength: Int {
        switch self {
        case .confirm: 1
        case .numberMatch: 2
        case .pin, .biometric, .custom: 3
        }
    }

    public static func < (lhs: Factor, rhs: Factor) -> Bool {
        (lhs.strength, lhs.rawValue) < (rhs.strength, rhs.rawValue)
    }

    /// The name an authenticator policy gives the factor (`number-match`), as in the
    /// authentication class URNs; the device protocol uses `rawValue` (`number_match`).
    public var policyName: String { rawValue.replacingOccurrences(of: "_", with: "-") }

    /// The factor a policy names; nil for any other name (`device-key` included, which is no
    /// factor of its own: every answer is signed by the device key).
    public init?(policyName: String) {
        guard let factor = Factor.allCases.first(where: { $0.policyName == policyName }) else { return nil }
        self = factor
    }
}

/// Why a user denied a request, signed in the answer (`ApprovalResponse.reason`). The device
/// sends `declined`, `cancelled` or `notRequested`; the server records `wrongNumber` and
/// `customRejected` itself when it turns an approval into a denial.
public enum DenyReason: String, Codable, Sendable, CaseIterable {
    /// The user said no.
    case declined
    /// The user backed out of a challenge (PIN entry, biometric prompt, custom step).
    case cancelled
    /// "I did not request this": reported as possible fraud.
    case notRequested = "not_requested"
    /// The number picked is not the one the relying party showed.
    case wrongNumber = "wrong_number"
    /// The tenant's custom verifier rejected the app's data.
    case customRejected = "custom_rejected"

    /// The reasons a device may sign.
    public static let fromDevice: [DenyReason] = [.declined, .cancelled, .notRequested]
}

/// The extra signature a PIN key or a biometric key makes over an answer. It covers the whole
/// compact JWS of the `ApprovalResponse` (so also the device key's signature), prefixed with
/// the factor's name, so a signature made for one factor or one answer cannot be used for
/// another.
///
/// ```swift
/// let message = FactorProof.message(factor: .pin, response: jws.serialized)
/// let signature = try pinKey.signature(for: message).base64URLEncodedString
/// ```
public enum FactorProof {
    public static func message(factor: Factor, response: String) -> Data {
        Data("countersign/v1/factor".utf8) + Data([0]) + Data(factor.rawValue.utf8) + Data([0]) + Data(response.utf8)
    }

    /// What the current PIN key signs to replace itself with `newKey` (`PUT /device/v1/self/pin`).
    public static func pinChangeMessage(deviceID: String, newKey: ECPublicJWK) -> Data {
        Data("countersign/v1/pin-change".utf8) + Data([0]) + Data(deviceID.utf8) + Data([0]) + Data(newKey.thumbprint.utf8)
    }

    /// Whether `signature` (base64url raw `r ‖ s`) is `key`'s over `message`.
    public static func isValid(_ signature: String, of message: Data, by key: P256.Signing.PublicKey) -> Bool {
        guard let raw = Data(base64URLEncoded: signature), raw.count == 64,
              let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: raw) else { return false }
        return key.isValidSignature(ecdsa, for: message)
    }
}

/// `PUT /device/v1/self/pin`: a new PIN key, proved by a signature of the current one over
/// `FactorProof.pinChangeMessage`. A wrong current PIN counts against the limit like a wrong
/// PIN on an answer.
public struct PINChange: Codable, Sendable, Equatable {
    public var pinKey: ECPublicJWK
    public var pinSignature: String

    public init(pinKey: ECPublicJWK, pinSignature: String) {
        self.pinKey = pinKey
        self.pinSignature = pinSignature
    }

    enum CodingKeys: String, CodingKey {
        case pinKey = "pin_key"
        case pinSignature = "pin_signature"
    }
}

/// `POST /device/v1/self/factors`: factors added to an enrollment without enrolling again, each
/// a new P-256 key of its own. The request is signed by the device key like every device call.
public struct FactorAddition: Codable, Sendable, Equatable {
    /// The key derived from a new PIN (`PINKey`).
    public var pinKey: ECPublicJWK?
    /// A new key the platform releases only after a biometric check.
    public var biometricKey: ECPublicJWK?

    public init(pinKey: ECPublicJWK? = nil, biometricKey: ECPublicJWK? = nil) {
        self.pinKey = pinKey
        self.biometricKey = biometricKey
    }

    enum CodingKeys: String, CodingKey {
        case pinKey = "pin_key"
        case biometricKey = "biometric_key"
    }
}

/// Number matching: how many digits the number has, and the choices a device offers (absent
/// when the tenant wants the number typed rather than picked).
public struct NumberMatch: Codable, Sendable, Equatable {
    public static let digits: Int64 = 2

    public var digits: Int64
    public var choices: [Int64]?

    public init(digits: Int64 = NumberMatch.digits, choices: [Int64]?) {
        self.digits = digits
        self.choices = choices
    }
}
