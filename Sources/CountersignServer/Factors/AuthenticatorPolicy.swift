import CountersignCore
import Foundation

/// How users may reach each authentication class: per class URN, a list of alternatives, each
/// an ordered list of factors the user goes through; any one alternative reaches the class.
/// A tenant sets one in its `AuthenticationPolicy`, a client may set its own for some classes
/// (`Client.authenticators`), and a class neither names keeps its built-in rule (its factor
/// alone, and the PIN where the fallback is allowed).
///
/// ```json
/// {"urn:countersign:acr:biometric": [["biometric"], ["pin", "number-match"], ["custom"]]}
/// ```
///
/// Factors are named as in the class URNs (`number-match`). `device-key` may be written for
/// clarity: every answer is signed by the device key, so it adds nothing to an alternative,
/// and an alternative of the device key alone is a confirmation on the device.
///
/// `passkey` is a sign-in with a passkey in the browser, in place of the phone. It stands alone
/// in its alternative (the browser and the phone are not one ceremony), only the hosted sign-in
/// can offer it (a CIBA request has no browser), and it asks the authenticator to verify the
/// user for every class stronger than a confirmation. A class the policy names without a
/// `passkey` alternative cannot be reached with a passkey; a class it does not name can, as
/// before (`PasskeyClass`).
public struct AuthenticatorPolicy: Codable, Sendable, Equatable {
    /// Class URN → alternatives → factor names.
    public var classes: [String: [[String]]]

    /// The most alternatives a class has, and the most factors in one: a device walks them on
    /// a phone screen.
    static let maximumAlternatives = 8
    static let maximumFactors = 5
    static let deviceKey = "device-key"
    static let passkey = "passkey"

    public init(_ classes: [String: [[String]]]) {
        self.classes = classes
    }

    public init(from decoder: any Decoder) throws {
        classes = try decoder.singleValueContainer().decode([String: [[String]]].self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(classes)
    }

    /// The names a policy may use, for messages.
    static var factorNames: String {
        ([deviceKey] + Factor.allCases.map(\.policyName) + [passkey]).joined(separator: ", ")
    }

    /// The alternatives a phone may answer `authenticationClass` with, as factors; nil when the
    /// policy does not name the class, empty when it names only a passkey. Only a validated
    /// policy is stored, so nothing else is dropped here but `device-key`.
    func alternatives(for authenticationClass: AuthenticationClass) -> [[Factor]]? {
        classes[authenticationClass.urn].map { $0.filter { !$0.contains(Self.passkey) }.map(Self.factors(of:)) }
    }

    /// Whether a passkey reaches `authenticationClass`; nil when the policy does not name the class.
    func acceptsPasskey(for authenticationClass: AuthenticationClass) -> Bool? {
        classes[authenticationClass.urn].map { $0.contains([Self.passkey]) }
    }

    /// An alternative's factors without the device key, a confirmation when that is all it names.
    private static func factors(of names: [String]) -> [Factor] {
        let factors = names.compactMap(Factor.init(policyName:))
        return factors.isEmpty ? [.confirm] : factors
    }

    /// Throws the first rule a policy breaks, naming `field`, the class and the alternative
    /// (counted from 1): a class Countersign does not define; no alternatives, or too many; an
    /// empty alternative, or one too long; an unknown factor, or one named twice; a factor in
    /// `switchedOff`; an alternative weaker than its class (a PIN class reached by a tap alone
    /// would put `…:pin` in tokens for a tap); the same alternative twice; a passkey with
    /// another factor, or where `passkeys` are switched off.
    func validated(field: String, switchedOff: Set<Factor>, passkeys: Bool = true) throws(AdminError) -> AuthenticatorPolicy {
        for (urn, alternatives) in classes.sorted(by: { $0.key < $1.key }) {
            guard let authenticationClass = AuthenticationClass(urn: urn) else {
                throw .invalidField(field, "\(urn) is not a class; the classes are \(AuthenticationClass.all.map(\.urn).joined(separator: ", "))")
            }
            guard (1...Self.maximumAlternatives).contains(alternatives.count) else {
                throw .invalidField(field, "\(urn) must have 1 to \(Self.maximumAlternatives) alternatives")
            }
            var seen: [Set<Factor>] = []
            for (index, names) in alternatives.enumerated() {
                let place = "\(urn) alternative \(index + 1)"
                guard (1...Self.maximumFactors).contains(names.count) else {
                    throw .invalidField(field, "\(place) must name 1 to \(Self.maximumFactors) factors")
                }
                if names.contains(Self.passkey) {
                    guard names == [Self.passkey] else {
                        throw .invalidField(field, "\(place) names passkey with other factors; a passkey is used in the browser, the others on the phone, so it must be an alternative of its own")
                    }
                    guard passkeys else {
                        throw .invalidField(field, "\(place) names passkey, which this tenant has switched off (passkeys.enabled is false)")
                    }
                    if let first = alternatives[..<index].firstIndex(of: names) {
                        throw .invalidField(field, "\(place) repeats alternative \(first + 1)")
                    }
                    seen.append([])  // no phone alternative is empty: keeps the count from 1 true
                    continue
                }
                for name in names where name != Self.deviceKey {
                    guard let factor = Factor(policyName: name) else {
                        throw .invalidField(field, "\(place) names the unknown factor \"\(name)\"; the factors are \(Self.factorNames)")
                    }
                    guard !switchedOff.contains(factor) else {
                        throw .invalidField(field, "\(place) names \(name), which this tenant has switched off")
                    }
                }
                guard Set(names).count == names.count else {
                    throw .invalidField(field, "\(place) names a factor twice")
                }
                let factors = Self.factors(of: names)
                guard let strongest = factors.max(), strongest.strength >= authenticationClass.factor.strength else {
                    throw .invalidField(field, "\(place) is weaker than the class: it needs a factor at least as strong as \(authenticationClass.factor.policyName)")
                }
                if let first = seen.firstIndex(of: Set(factors)) {
                    throw .invalidField(field, "\(place) repeats alternative \(first + 1)")
                }
                seen.append(Set(factors))
            }
        }
        return self
    }
}
