import Foundation

/// Where a `PasskeyAuthenticator` keeps its discoverable credentials: each credential's record
/// (RP ID, user, creation time, kind, counter) and its private key, which never leaves the
/// store. The store makes the key, so a hardware-backed store can make it where it stays.
///
/// `FilePasskeyStore` works everywhere; `KeychainPasskeyStore` (Apple platforms) keeps
/// device-bound keys in the Secure Enclave.
///
/// ```swift
/// let store = FilePasskeyStore(root: appSupport.appending(path: "passkeys"))
/// let authenticator = PasskeyAuthenticator(store: store)
/// ```
///
/// Every method reports a failure of the store itself as `PasskeyAuthenticatorError.keyStore(_:)`.
public protocol PasskeyKeyStore: Sendable {
    /// Makes a new P-256 key for a credential of `kind` and stores it with the credential's
    /// record, with a counter of 0.
    func createCredential(
        id: [UInt8], rpID: String, user: PasskeyUser, kind: PasskeyKind, createdAt: Date
    ) async throws(PasskeyAuthenticatorError) -> PasskeyCredential
    /// The credentials scoped to `rpID`, or every credential for nil, oldest first.
    func credentials(rpID: String?) async throws(PasskeyAuthenticatorError) -> [PasskeyCredential]
    /// The credential's ECDSA P-256 signature over SHA-256 of `message`, ASN.1 DER encoded as
    /// WebAuthn requires. `.noCredentials` when there is no such credential.
    func signature(for message: [UInt8], credentialID: [UInt8]) async throws(PasskeyAuthenticatorError) -> [UInt8]
    /// Adds one to the credential's counter and returns the new value, only once it is stored:
    /// a counter value is never handed out twice, even if the app stops right after.
    func incrementSignCount(credentialID: [UInt8]) async throws(PasskeyAuthenticatorError) -> UInt32
    /// Deletes the credential and its key; `.noCredentials` when there is none.
    func deleteCredential(id: [UInt8]) async throws(PasskeyAuthenticatorError)
}
