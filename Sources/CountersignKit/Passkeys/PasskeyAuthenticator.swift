import CountersignWebAuthn
import Crypto
import Foundation

/// The app as a WebAuthn platform authenticator: it makes and uses discoverable credentials
/// (passkeys) for any relying party, where the system's passkey interface is not wanted.
///
/// It plays the client's part as well as the authenticator's, so it checks what a browser
/// would before anything is signed: the origin is `https` (or `http://localhost`), the RP ID
/// is the origin's host or a domain above it, the user handle is 1 to 64 bytes, ES256 is
/// offered, `excludeCredentials` names nothing stored here. It writes `clientDataJSON` itself
/// (with `crossOrigin: false`), so the origin the app passes is the one the relying party
/// checks: pass the origin of the site the user is signing in to, never one taken from the
/// options.
///
/// - Keys come from the `PasskeyKeyStore` (Secure Enclave on Apple platforms through
///   `KeychainPasskeyStore`). Credential IDs are 32 random bytes.
/// - Every answer has UP set: calling `register` or `signIn` is the user's gesture, and the app
///   must call them only on one. UV is set only when the `userVerifier` ran and passed.
/// - Device-bound credentials count signatures (1, 2, 3, …, stored before the answer is
///   returned); `.synced` credentials report BE and BS and a counter of 0.
/// - At sign-in the matching credentials are offered to the `selector` by key name
///   (`PasskeyKeyName`); without a selector the most recently created one is used.
///
/// ```swift
/// let authenticator = PasskeyAuthenticator(
///     store: FilePasskeyStore(root: passkeysDirectory),
///     attestation: .packed,
///     userVerifier: BiometricPasskeyVerifier(keys: SecureEnclaveBiometricKeys()),
///     selector: AccountPicker())
/// let registration = try await authenticator.register(creationOptions, origin: "https://example.org")
/// let assertion = try await authenticator.signIn(requestOptions, origin: "https://example.org")
/// ```
public struct PasskeyAuthenticator: Sendable {
    /// Countersign's AAGUID, `b9691d63-0755-41a4-a4b7-3014aa41c895`: the authenticator model a
    /// relying party sees in `packed` registrations unless the app configures its own. It is
    /// fixed for every Countersign authenticator and names no device.
    public static let countersignAAGUID = UUID(uuid: (
        0xB9, 0x69, 0x1D, 0x63, 0x07, 0x55, 0x41, 0xA4, 0xA4, 0xB7, 0x30, 0x14, 0xAA, 0x41, 0xC8, 0x95))

    public let store: any PasskeyKeyStore
    /// The attestation given when the relying party asks for one (see `PasskeyAttestationFormat`).
    public let attestation: PasskeyAttestationFormat
    /// The kind of credential `register` makes.
    public let credentialKind: PasskeyKind
    /// The AAGUID in `packed` registrations; `none` registrations carry sixteen zero bytes.
    public let aaguid: UUID
    let userVerifier: (any PasskeyUserVerifier)?
    let selector: (any PasskeyCredentialSelector)?
    let now: @Sendable () -> Date

    /// - Parameters:
    ///   - store: where credentials and their keys are kept.
    ///   - attestation: `.none` (the default) or `.packed` self attestation.
    ///   - credentialKind: `.deviceBound` (the default) or `.synced`.
    ///   - aaguid: the AAGUID of `packed` registrations.
    ///   - userVerifier: the device's check of the user, or nil when it has none; then a relying
    ///     party that requires verification is refused with `.userVerificationUnavailable`.
    ///   - selector: chooses among the matching credentials at sign-in, or nil to take the newest.
    ///   - now: the clock of creation times.
    public init(
        store: any PasskeyKeyStore, attestation: PasskeyAttestationFormat = .none, credentialKind: PasskeyKind = .deviceBound,
        aaguid: UUID = PasskeyAuthenticator.countersignAAGUID, userVerifier: (any PasskeyUserVerifier)? = nil,
        selector: (any PasskeyCredentialSelector)? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.attestation = attestation
        self.credentialKind = credentialKind
        self.aaguid = aaguid
        self.userVerifier = userVerifier
        self.selector = selector
        self.now = now
    }

    /// The stored credentials of `rpID`, or all of them for nil, oldest first.
    public func credentials(rpID: String? = nil) async throws(PasskeyAuthenticatorError) -> [PasskeyCredential] {
        try await store.credentials(rpID: rpID?.lowercased())
    }

    /// Deletes a credential and its key. The relying party still holds the public key: tell it,
    /// where it offers a way, so that it stops listing the passkey.
    public func delete(_ credential: PasskeyCredential) async throws(PasskeyAuthenticatorError) {
        try await store.deleteCredential(id: credential.id)
    }

    // MARK: - Shared by both ceremonies

    /// Asks the verifier as `requirement` (`userVerification`) says: `required` must verify,
    /// `preferred` verifies when it can, `discouraged` never asks. An unknown value counts as
    /// `preferred`, the default, as WebAuthn says of unknown enumeration values. Returns
    /// whether the user was verified.
    func verifyUser(_ requirement: String, _ request: PasskeyVerificationRequest) async throws(PasskeyAuthenticatorError) -> Bool {
        guard requirement != "discouraged" else { return false }
        let required = requirement == "required"
        guard let userVerifier else {
            if required { throw .userVerificationUnavailable }
            return false
        }
        switch await userVerifier.verifyUser(request) {
        case .verified: return true
        case .failed: throw .userVerificationFailed
        case .cancelled: throw .cancelled
        case .unavailable:
            if required { throw .userVerificationUnavailable }
            return false
        }
    }

    /// UP always; UV when verified; BE and BS for synced credentials.
    static func flags(verified: Bool, kind: PasskeyKind) -> AuthenticatorFlags {
        var flags: AuthenticatorFlags = [.userPresent]
        if verified { flags.insert(.userVerified) }
        if kind == .synced { flags.formUnion([.backupEligible, .backupState]) }
        return flags
    }

    static func rpIDHash(_ rpID: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(rpID.utf8)))
    }

    /// What the credential signs: `authenticatorData ‖ SHA-256(clientDataJSON)`.
    static func signedData(_ authenticatorData: AuthenticatorData, _ clientDataJSON: [UInt8]) -> [UInt8] {
        authenticatorData.bytes + Array(SHA256.hash(data: clientDataJSON))
    }
}
