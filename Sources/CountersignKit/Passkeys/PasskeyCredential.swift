import Crypto
#if canImport(CryptoKit)
// CryptoKit does not declare its types Sendable in the iOS 17 and 18 SDKs (docs/sdk.md).
@preconcurrency import CryptoKit
#endif
import Foundation

/// How a passkey's key may live, which the flags of every answer report (BE and BS, WebAuthn
/// Level 3 §6.1.3) and which decides its signature counter.
///
/// ```swift
/// let authenticator = PasskeyAuthenticator(store: store, credentialKind: .synced)
/// ```
public enum PasskeyKind: String, Sendable, Codable, CaseIterable {
    /// The key never leaves this device (the Secure Enclave on Apple platforms): BE = 0, BS = 0,
    /// and a signature counter that grows by one with every assertion.
    case deviceBound = "device-bound"
    /// A key meant to be copied between the user's devices, as synced passkeys are: BE = 1,
    /// BS = 1, and the counter always 0, since copies cannot agree on one. The Keychain store
    /// makes its item synchronizable; the file store keeps it like any other.
    case synced
}

/// The account a passkey is for, as the relying party named it at registration.
public struct PasskeyUser: Sendable, Hashable {
    /// The user handle (`user.id`): 1 to 64 opaque bytes, returned in every assertion.
    public let handle: [UInt8]
    /// `user.name`, such as an e-mail address.
    public let name: String
    /// `user.displayName`, such as a full name; may be empty.
    public let displayName: String

    public init(handle: [UInt8], name: String, displayName: String) {
        self.handle = handle
        self.name = name
        self.displayName = displayName
    }
}

/// A discoverable credential as the store keeps it, without its private key (which only the
/// store can use).
///
/// ```swift
/// for credential in try await authenticator.credentials(rpID: "example.org") {
///     print(credential.keyName, credential.signCount)
/// }
/// ```
public struct PasskeyCredential: Sendable {
    /// The credential ID: 32 random bytes.
    public let id: [UInt8]
    /// The RP ID the credential is scoped to; it is offered to no other.
    public let rpID: String
    public let user: PasskeyUser
    public let createdAt: Date
    public let kind: PasskeyKind
    /// The last counter value an assertion carried (0 before the first, and always for `.synced`).
    public let signCount: UInt32
    public let publicKey: P256.Signing.PublicKey

    public init(
        id: [UInt8], rpID: String, user: PasskeyUser, createdAt: Date, kind: PasskeyKind, signCount: UInt32,
        publicKey: P256.Signing.PublicKey
    ) {
        self.id = id
        self.rpID = rpID
        self.user = user
        self.createdAt = createdAt
        self.kind = kind
        self.signCount = signCount
        self.publicKey = publicKey
    }

    /// The name a selector is offered for this credential when no other of its RP shares it:
    /// `"<display name> <registered time>"` (see `PasskeyKeyName`).
    public var keyName: String { PasskeyKeyName.base(of: self) }
}
