// Built on Apple platforms only (the Security framework, LocalAuthentication's platforms, and
// CryptoKit's Secure Enclave keys); it cannot be compiled on Linux, where `FilePasskeyStore`
// stands in. It is a thin adapter: records are the same JSON as the file store's
// (`StoredPasskey`), and every rule of the ceremonies lives in `PasskeyAuthenticator`.
#if canImport(Security) && canImport(LocalAuthentication) && canImport(CryptoKit)
import CountersignCore
import Crypto
import Foundation
import Security

/// A `PasskeyKeyStore` in the keychain: one generic-password item per credential, holding its
/// record and its key.
///
/// - `.deviceBound` credentials get a Secure Enclave key where the device has one (a software
///   key otherwise), in an item `kSecAttrAccessibleWhenUnlockedThisDeviceOnly`: never in a
///   backup, never on another device.
/// - `.synced` credentials get a software key in a synchronizable item
///   (`kSecAttrAccessibleWhenUnlocked`), which iCloud Keychain copies to the user's other
///   devices when it is on; their counter stays 0.
///
/// User verification is the `PasskeyUserVerifier`'s, not the key's: the Secure Enclave key is
/// made with `.privateKeyUsage` only, so that `preferred` verification can be skipped where
/// the verifier is unavailable, as WebAuthn allows.
///
/// Apple platforms only: it is not compiled on Linux, so it is built and tested only where the
/// Security framework exists; elsewhere use `FilePasskeyStore`.
///
/// ```swift
/// let authenticator = PasskeyAuthenticator(
///     store: KeychainPasskeyStore(service: "com.example.passkeys"),
///     userVerifier: BiometricPasskeyVerifier(keys: SecureEnclaveBiometricKeys()))
/// ```
public struct KeychainPasskeyStore: PasskeyKeyStore, PasskeyPINRecordStore {
    /// The keychain service of the items.
    public let service: String
    /// The keychain access group shared with app extensions, or nil for the app's default.
    public let accessGroup: String?

    public init(service: String = "org.countersign.passkeys", accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    /// Read-modify-write of a counter is serialised within the process; the keychain has no
    /// lock of its own.
    private static let counterLock = Locked(())
    /// The PIN record lives under a service of its own, so listing credentials never meets it.
    private var pinService: String { service + ".pin" }
    private static let pinAccount = "pin"

    public func createCredential(
        id: [UInt8], rpID: String, user: PasskeyUser, kind: PasskeyKind, createdAt: Date
    ) async throws(PasskeyAuthenticatorError) -> PasskeyCredential {
        let stored: StoredPasskey
        if kind == .deviceBound, SecureEnclave.isAvailable {
            guard let access = SecAccessControlCreateWithFlags(
                nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .privateKeyUsage, nil),
                  let key = try? SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
            else { throw .keyStore("the Secure Enclave could not create a key") }
            stored = StoredPasskey(
                id: id, rpID: rpID, user: user, kind: kind, createdAt: createdAt, publicKey: key.publicKey,
                keyStorage: .secureEnclave, key: key.dataRepresentation)
        } else {
            stored = StoredPasskey.software(id: id, rpID: rpID, user: user, kind: kind, createdAt: createdAt)
        }
        var attributes = query(account: stored.credentialID, synchronizable: kind == .synced)
        attributes[kSecValueData as String] = try stored.encoded()
        attributes[kSecAttrAccessible as String] = kind == .synced
            ? kSecAttrAccessibleWhenUnlocked : kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        let status = SecItemAdd(attributes as CFDictionary, nil)
        guard status == errSecSuccess else { throw Self.failure(status, "cannot store a passkey") }
        return try stored.credential()
    }

    public func credentials(rpID: String?) async throws(PasskeyAuthenticatorError) -> [PasskeyCredential] {
        var query = query(account: nil)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess, let items = result as? [Data] else { throw Self.failure(status, "cannot list passkeys") }
        var found: [PasskeyCredential] = []
        for item in items {
            let stored = try StoredPasskey(decoding: item)
            if rpID == nil || stored.rpID == rpID { found.append(try stored.credential()) }
        }
        return found.sorted { ($0.createdAt, Data($0.id).base64URLEncodedString) < ($1.createdAt, Data($1.id).base64URLEncodedString) }
    }

    public func signature(for message: [UInt8], credentialID: [UInt8]) async throws(PasskeyAuthenticatorError) -> [UInt8] {
        let stored = try read(credentialID)
        guard stored.keyStorage == .secureEnclave else { return try stored.softwareSignature(for: message) }
        guard let handle = Data(base64URLEncoded: stored.key),
              let key = try? SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: handle),
              let signature: P256.Signing.ECDSASignature = try? key.signature(for: Data(message))
        else { throw .keyStore("the Secure Enclave key of a passkey cannot sign") }
        return Array(signature.derRepresentation)
    }

    public func incrementSignCount(credentialID: [UInt8]) async throws(PasskeyAuthenticatorError) -> UInt32 {
        try Self.counterLock.withLock { _ throws(PasskeyAuthenticatorError) -> UInt32 in
            var stored = try read(credentialID)
            let count = try stored.incrementSignCount()
            let record = try stored.encoded()
            let status = SecItemUpdate(
                query(account: stored.credentialID) as CFDictionary, [kSecValueData as String: record] as CFDictionary)
            guard status == errSecSuccess else { throw Self.failure(status, "cannot store a passkey's counter") }
            return count
        }
    }

    public func deleteCredential(id: [UInt8]) async throws(PasskeyAuthenticatorError) {
        let status = SecItemDelete(query(account: Data(id).base64URLEncodedString) as CFDictionary)
        if status == errSecItemNotFound { throw .noCredentials }
        guard status == errSecSuccess else { throw Self.failure(status, "cannot delete a passkey") }
    }

    public func pinRecord() async throws(PasskeyAuthenticatorError) -> Data? {
        try readData(account: Self.pinAccount, service: pinService)
    }

    public func setPINRecord(_ record: Data?) async throws(PasskeyAuthenticatorError) {
        let pinQuery = query(account: Self.pinAccount, service: pinService, synchronizable: false)
        guard let record else {
            let status = SecItemDelete(pinQuery as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.failure(status, "cannot delete the PIN record") }
            return
        }
        var status = SecItemUpdate(pinQuery as CFDictionary, [kSecValueData as String: record] as CFDictionary)
        if status == errSecItemNotFound {
            var attributes = pinQuery
            attributes[kSecValueData as String] = record
            attributes[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            status = SecItemAdd(attributes as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw Self.failure(status, "cannot store the PIN record") }
    }

    // MARK: - Keychain items

    /// `synchronizable` nil matches items of both kinds, as lookups must.
    private func query(account: String?, service: String? = nil, synchronizable: Bool? = nil) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service ?? self.service,
            kSecUseDataProtectionKeychain as String: true,
            kSecAttrSynchronizable as String: synchronizable.map { $0 as Any } ?? kSecAttrSynchronizableAny,
        ]
        if let account { query[kSecAttrAccount as String] = account }
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private func read(_ credentialID: [UInt8]) throws(PasskeyAuthenticatorError) -> StoredPasskey {
        guard let data = try readData(account: Data(credentialID).base64URLEncodedString) else { throw .noCredentials }
        return try StoredPasskey(decoding: data)
    }

    private func readData(account: String, service: String? = nil) throws(PasskeyAuthenticatorError) -> Data? {
        var query = query(account: account, service: service)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else { throw Self.failure(status, "cannot read a keychain item") }
        return data
    }

    private static func failure(_ status: OSStatus, _ what: String) -> PasskeyAuthenticatorError {
        .keyStore("\(what): " + (SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)"))
    }
}
#endif
