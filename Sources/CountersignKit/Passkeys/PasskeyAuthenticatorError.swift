/// Why the passkey authenticator refused a ceremony. Each case is the error a browser would
/// raise in the same situation (`domExceptionName`), so an app that hands the outcome to web
/// content can report it as `navigator.credentials` would.
///
/// ```swift
/// do {
///     let response = try await authenticator.signIn(options, origin: "https://example.org")
///     send(response)
/// } catch .noCredentials {
///     showRegistrationOffer()
/// } catch .cancelled {
///     // The user backed out: nothing to report.
/// } catch {
///     show(error.description)
/// }
/// ```
public enum PasskeyAuthenticatorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The origin is not one a credential may be used from: not an `https` origin, nor
    /// `http://localhost`, or not an origin at all (a path, query, fragment or credentials in
    /// it). `SecurityError`.
    case invalidOrigin(String)
    /// The RP ID is neither the origin's host nor a domain the host lies below (or it is a
    /// single label, like `com`, that no site may claim). `SecurityError`.
    case relyingPartyIDMismatch(rpID: String, origin: String)
    /// `user.id` is not 1 to 64 bytes. `TypeError`.
    case invalidUserHandle(length: Int)
    /// `pubKeyCredParams` does not offer ES256 (COSE -7), the only algorithm this
    /// authenticator makes keys for. `NotSupportedError`.
    case noSupportedAlgorithm
    /// A credential in `excludeCredentials` is stored here for this RP ID: the user already
    /// has a passkey for this account on this device. `InvalidStateError`.
    case credentialExcluded
    /// The relying party requires user verification and there is no verifier, or the verifier
    /// cannot verify now (no biometry enrolled, PIN not set or locked out). `NotAllowedError`.
    case userVerificationUnavailable
    /// User verification ran and the user was not recognised. `NotAllowedError`.
    case userVerificationFailed
    /// No stored credential for this RP ID (and among `allowCredentials`, when it names any).
    /// `NotAllowedError`.
    case noCredentials
    /// The user cancelled: the selector answered nil, or a verification prompt was dismissed.
    /// `NotAllowedError`.
    case cancelled
    /// The selector answered a name it was not offered. The app may show key names as it
    /// likes, but must answer with one of the originals. `NotAllowedError`.
    case unknownKeyName
    /// A new passkey PIN is not 4 to 12 ASCII digits (`PINPasskeyVerifier.setPIN`). `TypeError`.
    case invalidPIN
    /// The key store failed (unreadable, corrupt, full); the text says how, and never holds
    /// key material. `UnknownError`.
    case keyStore(String)

    /// The `DOMException` name a browser raises for the same refusal.
    public var domExceptionName: String {
        switch self {
        case .invalidOrigin, .relyingPartyIDMismatch: "SecurityError"
        case .invalidUserHandle, .invalidPIN: "TypeError"
        case .noSupportedAlgorithm: "NotSupportedError"
        case .credentialExcluded: "InvalidStateError"
        case .userVerificationUnavailable, .userVerificationFailed, .noCredentials, .cancelled, .unknownKeyName:
            "NotAllowedError"
        case .keyStore: "UnknownError"
        }
    }

    public var description: String {
        let reason = switch self {
        case .invalidOrigin(let origin): "\(origin) is not an https origin (or http://localhost)"
        case .relyingPartyIDMismatch(let rpID, let origin): "the RP ID \(rpID) is not \(origin)'s host or a domain above it"
        case .invalidUserHandle(let length): "user.id is \(length) bytes; it must be 1 to 64"
        case .noSupportedAlgorithm: "pubKeyCredParams does not offer ES256 (-7)"
        case .credentialExcluded: "a credential in excludeCredentials is already stored here"
        case .userVerificationUnavailable: "user verification is required but not available"
        case .userVerificationFailed: "user verification failed"
        case .noCredentials: "no stored passkey matches"
        case .cancelled: "cancelled"
        case .unknownKeyName: "the chosen key name is not one of those offered"
        case .invalidPIN: "a passkey PIN must be 4 to 12 digits"
        case .keyStore(let text): "passkey store: \(text)"
        }
        return "\(domExceptionName): \(reason)"
    }
}
