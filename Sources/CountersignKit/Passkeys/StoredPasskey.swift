import CountersignCore
import Crypto
import Foundation

/// One credential as a store writes it: the public record and what the store needs to use the
/// key again. `FilePasskeyStore` keeps it as a file and `KeychainPasskeyStore` as an item, both
/// as this JSON, so that the record's form is written down once.
struct StoredPasskey: Codable {
    enum KeyStorage: String, Codable {
        /// `key` is the raw 32-byte P-256 private scalar.
        case software
        /// `key` is a Secure Enclave key's `dataRepresentation`, usable only on this device.
        case secureEnclave = "secure-enclave"
    }

    var credentialID: String
    var rpID: String
    var userHandle: String
    var userName: String
    var userDisplayName: String
    var createdAt: Date
    var kind: PasskeyKind
    var signCount: UInt32
    /// The public key, X9.63 uncompressed, base64url.
    var publicKey: String
    var keyStorage: KeyStorage
    /// The key's bytes as `keyStorage` says, base64url.
    var key: String

    enum CodingKeys: String, CodingKey {
        case credentialID = "credential_id", rpID = "rp_id", userHandle = "user_handle", userName = "user_name"
        case userDisplayName = "user_display_name", createdAt = "created_at", kind, signCount = "sign_count"
        case publicKey = "public_key", keyStorage = "key_storage", key
    }

    init(
        id: [UInt8], rpID: String, user: PasskeyUser, kind: PasskeyKind, createdAt: Date,
        publicKey: P256.Signing.PublicKey, keyStorage: KeyStorage, key: Data
    ) {
        credentialID = Data(id).base64URLEncodedString
        self.rpID = rpID
        userHandle = Data(user.handle).base64URLEncodedString
        userName = user.name
        userDisplayName = user.displayName
        self.createdAt = createdAt
        self.kind = kind
        signCount = 0
        self.publicKey = publicKey.x963Representation.base64URLEncodedString
        self.keyStorage = keyStorage
        self.key = key.base64URLEncodedString
    }

    /// A new software key, for stores without hardware or for synced credentials.
    static func software(id: [UInt8], rpID: String, user: PasskeyUser, kind: PasskeyKind, createdAt: Date) -> StoredPasskey {
        let key = P256.Signing.PrivateKey()
        return StoredPasskey(
            id: id, rpID: rpID, user: user, kind: kind, createdAt: createdAt, publicKey: key.publicKey,
            keyStorage: .software, key: key.rawRepresentation)
    }

    init(decoding data: Data) throws(PasskeyAuthenticatorError) {
        do { self = try Timestamps.decoder().decode(StoredPasskey.self, from: data) } catch {
            throw .keyStore("a passkey record is corrupt")
        }
    }

    func encoded() throws(PasskeyAuthenticatorError) -> Data {
        do { return try Timestamps.encoder().encode(self) } catch { throw .keyStore("cannot encode a passkey record") }
    }

    var id: [UInt8]? { Data(base64URLEncoded: credentialID).map(Array.init) }

    func credential() throws(PasskeyAuthenticatorError) -> PasskeyCredential {
        guard let id, let handle = Data(base64URLEncoded: userHandle),
              let point = Data(base64URLEncoded: publicKey),
              let publicKey = try? P256.Signing.PublicKey(x963Representation: point)
        else { throw .keyStore("a passkey record is corrupt") }
        return PasskeyCredential(
            id: id, rpID: rpID, user: PasskeyUser(handle: Array(handle), name: userName, displayName: userDisplayName),
            createdAt: createdAt, kind: kind, signCount: signCount, publicKey: publicKey)
    }

    /// Signs with a software key; a Secure Enclave key is its store's to use.
    func softwareSignature(for message: [UInt8]) throws(PasskeyAuthenticatorError) -> [UInt8] {
        guard keyStorage == .software, let bytes = Data(base64URLEncoded: key),
              let privateKey = try? P256.Signing.PrivateKey(rawRepresentation: bytes),
              let signature: P256.Signing.ECDSASignature = try? privateKey.signature(for: Data(message))
        else { throw .keyStore("the key of a passkey cannot sign") }
        return Array(signature.derRepresentation)
    }

    /// The next counter value, refusing to wrap around to a value already used.
    mutating func incrementSignCount() throws(PasskeyAuthenticatorError) -> UInt32 {
        guard signCount < UInt32.max else { throw .keyStore("the passkey's signature counter is exhausted") }
        signCount += 1
        return signCount
    }
}
