import CountersignCore
import Foundation

/// What an approval proves about how the user authenticated, in the terms of OpenID Connect:
/// the authentication context class (`acr`) and the methods (`amr`, RFC 8176).
///
/// Every approval is a signature by a key that was generated on an enrolled device and never
/// left it: proof of possession, `pop` (RFC 8176 §2; `hwk` or `swk` would claim to know where
/// the key lives, which the server cannot tell). The factors add the user's part: a tap or a
/// matched number is a user-presence test (`user`), a PIN is `pin`, a biometric check is
/// `face` or `fpt` when the device says which (else `user`). A PIN or a biometric check beside
/// the device key is a second factor of another kind: `mfa`. The app's own authenticator adds
/// nothing the server can name.
///
/// The `acr` is the class of what the answer actually used (`AuthenticationClass`): the class
/// the request required when the answer met one of its alternatives (or, without alternatives,
/// used its factor), else the strongest factor used (a PIN that stood in for a biometric check
/// gives the PIN class).
struct AuthenticationContext: Sendable, Equatable {
    /// The classes Countersign can satisfy, for discovery (the passkey class at the hosted
    /// sign-in only).
    static let supportedClasses = AuthenticationClass.all.map(\.urn) + [PasskeyClass.urn]

    let acr: String
    let amr: [String]

    /// The context of an approval that used `factors`, for a request that required
    /// `verification`: its class when the factors meet one of the alternatives sealed with it
    /// (for a request without alternatives, when they include the class's factor), else the
    /// class of the strongest factor used (a PIN that stood in for a biometric check gives the
    /// PIN class).
    init(factors: [String], verification: TransactionDetails.Verification?, biometry: String? = nil) {
        let used = factors.compactMap(Factor.init(rawValue:))
        var methods = ["pop"]
        func add(_ method: String) { if !methods.contains(method) { methods.append(method) } }
        for factor in used {
            switch factor {
            case .confirm, .numberMatch: add("user")
            case .pin: add("pin")
            case .biometric: add(biometry == "face" ? "face" : biometry == "fingerprint" ? "fpt" : "user")
            case .custom: break
            }
        }
        if used.contains(.pin) || used.contains(.biometric) { add("mfa") }
        amr = methods
        // Without alternatives the class is reached by its own factor only: a PIN given for a
        // tap reaches the PIN class. With them, by any sealed alternative: the policy says which
        // class each reaches.
        let reached: Bool = if let verification {
            verification.alternatives == nil ? used.contains(verification.factor) : verification.offered.contains { alternative in
                alternative.map { AnswerCheck.meets($0, with: Set(used)) && !used.isEmpty } ?? false
            }
        } else {
            false
        }
        let achieved: Factor = if let verification, reached { verification.factor } else { used.max() ?? .confirm }
        acr = AuthenticationClass(factor: achieved).urn
    }

    /// The context of an answer to a request that required `required` alone.
    init(factors: [String], required: Factor?, biometry: String? = nil) {
        self.init(factors: factors, verification: required.map { .init(factor: $0) }, biometry: biometry)
    }

    /// This context after the user's directory password was checked first: `pwd` (RFC 8176
    /// §2) leads the methods, and a password beside the device key is a second factor of
    /// another kind (`mfa`). The class stays the device's: the password adds to no class.
    func afterPassword() -> AuthenticationContext {
        var methods = amr.filter { $0 != "pwd" }
        methods.insert("pwd", at: 0)
        if !methods.contains("mfa") { methods.append("mfa") }
        return AuthenticationContext(acr: acr, amr: methods)
    }

    /// The class of a sign-in with a recovery code: one-time (`otp`, RFC 8176 §2), and of
    /// assurance so low it is no class a client may ask for. A session signed in with it reaches
    /// only the account page's enrollment of a phone or a passkey (docs/recovery.md).
    static let recoveryCodeClass = "urn:countersign:acr:recovery-code"
    /// The class of a sign-in with a temporary access pass: the same reach as a recovery code.
    static let temporaryAccessPassClass = "urn:countersign:acr:temporary-access-pass"

    /// A sign-in with a recovery code.
    static let recoveryCode = AuthenticationContext(acr: recoveryCodeClass, amr: ["otp"])

    /// A sign-in with a temporary access pass: `otp` when the pass is one-time, `pwd` when it
    /// may be used again until it expires.
    static func temporaryAccessPass(oneTime: Bool) -> AuthenticationContext {
        AuthenticationContext(acr: temporaryAccessPassClass, amr: [oneTime ? "otp" : "pwd"])
    }

    /// Whether this is a recovery sign-in (a recovery code or a temporary access pass), which
    /// answers no client and unlocks only enrollment.
    var isRecovery: Bool { acr == Self.recoveryCodeClass || acr == Self.temporaryAccessPassClass }

    /// A context recorded earlier, restated as it was (the tokens of a refresh).
    init(acr: String, amr: [String]) {
        self.acr = acr
        self.amr = amr
    }

    /// The context of a decided request, reading the biometry kind from its signed answer.
    init(of transaction: ApprovalTransaction) {
        let biometry = transaction.response
            .flatMap { try? CompactJWS(parsing: $0) }
            .flatMap { try? JSONValue(parsing: $0.payload) }?["biometry"]?.stringValue
        self.init(factors: transaction.factors ?? [], verification: transaction.verification ?? .init(factor: .confirm),
                  biometry: biometry)
    }
}
