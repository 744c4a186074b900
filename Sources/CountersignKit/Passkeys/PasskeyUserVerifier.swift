/// What a ceremony asks the user to be verified for, to word the prompt.
public struct PasskeyVerificationRequest: Sendable, Equatable {
    public enum Ceremony: String, Sendable {
        case registration, signIn = "sign-in"
    }

    public let ceremony: Ceremony
    /// The RP ID the passkey is for.
    public let rpID: String
    /// The account: `user.name` at registration, the chosen credential's at sign-in.
    public let userName: String

    public init(ceremony: Ceremony, rpID: String, userName: String) {
        self.ceremony = ceremony
        self.rpID = rpID
        self.userName = userName
    }

    /// A sentence for a prompt: "Create a passkey for alice at example.org" or
    /// "Sign in to example.org as alice".
    public var prompt: String {
        switch ceremony {
        case .registration: "Create a passkey for \(userName) at \(rpID)"
        case .signIn: "Sign in to \(rpID) as \(userName)"
        }
    }
}

/// The outcome of one user verification.
public enum PasskeyUserVerification: Sendable, Equatable {
    /// The check ran and the user passed: the UV flag is set.
    case verified
    /// The check ran and the user did not pass.
    case failed
    /// The user dismissed the prompt.
    case cancelled
    /// The check cannot run now (no biometry enrolled, no PIN set, too many wrong PINs). A
    /// relying party that only prefers verification gets an answer without the UV flag.
    case unavailable
}

/// The device's own check of the user (a biometric, a PIN) that sets the UV flag of a passkey
/// answer. The authenticator asks it when the relying party requires or prefers verification,
/// and never when it discourages it.
///
/// `BiometricPasskeyVerifier` checks through the Kit's `BiometricKeys`; `PINPasskeyVerifier`
/// checks a PIN kept on the device. An app may implement its own: it must answer `.verified`
/// only when a check really ran and passed, since the relying party trusts the flag.
///
/// ```swift
/// let authenticator = PasskeyAuthenticator(
///     store: store, userVerifier: BiometricPasskeyVerifier(keys: SecureEnclaveBiometricKeys()))
/// ```
public protocol PasskeyUserVerifier: Sendable {
    func verifyUser(_ request: PasskeyVerificationRequest) async -> PasskeyUserVerification
}
