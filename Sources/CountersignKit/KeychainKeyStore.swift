// Built on Apple platforms only: it needs the Security framework and CryptoKit's Secure Enclave
// keys. On Apple platforms swift-crypto's `import Crypto` re-exports CryptoKit, so `P256` and
// `SecureEnclave` below are CryptoKit's types, the same ones CountersignCore signs with. (A build
// with CRYPTO_IN_SWIFTPM_FORCE_BUILD_API would break that and is not supported here.)
#if canImport(Security) && canImport(CryptoKit)
import CountersignCore
import Crypto
// CryptoKit does not declare its types Sendable in the iOS 17 and 18 SDKs (docs/sdk.md).
@preconcurrency import CryptoKit
import Foundation
import Security

/// A `KeyStore` in the keychain, with the private keys in the Secure Enclave when the device has
/// one (software keys otherwise). Every item is `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`:
/// usable in the background once the device has been unlocked after boot (a push can arrive at
/// any time), and never copied into a backup or onto another device.
///
/// ```swift
/// let authenticator = CountersignAuthenticator(
///     keyStore: KeychainKeyStore(service: "com.example.authenticator", accessGroup: "TEAMID.com.example.shared"))
/// ```
///
/// Secure Enclave keys are stored as their `dataRepresentation`, a blob only this device's
/// Secure Enclave can use.
public struct KeychainKeyStore: KeyStore {
    /// Prefix of the keychain services: `<service>.keys` and `<service>.enrollments`.
    public let service: String
    /// The keychain access group shared with app extensions, or nil for the app's default.
    public let accessGroup: String?

    public init(service: String = "org.countersign.authenticator", accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    private var keyService: String { service + ".keys" }
    private var recordService: String { service + ".enrollments" }

    /// How a key is kept in its keychain item.
    private struct StoredKey: Codable {
        enum Kind: String, Codable { case software, secureEnclave = "secure-enclave" }
        let kind: Kind
        let data: Data
    }

    public func createKeys(for enrollmentID: String) async throws(CountersignError) -> DeviceKeys {
        let (keys, signing, agreement) = try Self.generateKeys()
        // Keys are never replaced: if items exist under this id, adding fails and they are kept.
        try add(Self.encode(signing), service: keyService, account: enrollmentID + ".signing")
        do {
            try add(Self.encode(agreement), service: keyService, account: enrollmentID + ".agreement")
        } catch {
            _ = try? remove(service: keyService, account: enrollmentID + ".signing")
            throw error
        }
        return keys
    }

    public func keys(for enrollmentID: String) async throws(CountersignError) -> DeviceKeys {
        guard let signingItem = try read(service: keyService, account: enrollmentID + ".signing"),
              let agreementItem = try read(service: keyService, account: enrollmentID + ".agreement") else {
            throw .notEnrolled
        }
        let signing = try Self.decode(signingItem, what: "signing key")
        let agreement = try Self.decode(agreementItem, what: "agreement key")
        do {
            let signer: any ES256Signer & Sendable = switch signing.kind {
            case .software: try P256.Signing.PrivateKey(rawRepresentation: signing.data)
            case .secureEnclave: SecureEnclaveSigner(key: try .init(dataRepresentation: signing.data))
            }
            let agreementKey: any DeviceAgreementKey & Sendable = switch agreement.kind {
            case .software: try P256.KeyAgreement.PrivateKey(rawRepresentation: agreement.data)
            case .secureEnclave: SecureEnclaveAgreementKey(key: try .init(dataRepresentation: agreement.data))
            }
            return DeviceKeys(signer: signer, agreement: agreementKey)
        } catch {
            throw .keyStore("the keys of enrollment \(enrollmentID) cannot be restored")
        }
    }

    public func save(_ enrollment: Enrollment) async throws(CountersignError) {
        guard try read(service: keyService, account: enrollment.id + ".signing") != nil else { throw .notEnrolled }
        let record: Data
        do { record = try Timestamps.encoder().encode(enrollment) } catch {
            throw .keyStore("cannot encode the record of enrollment \(enrollment.id)")
        }
        try add(record, service: recordService, account: enrollment.id, replacing: true)
    }

    public func enrollments() async throws(CountersignError) -> [Enrollment] {
        var query = baseQuery(service: recordService, account: nil)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess, let items = result as? [Data] else {
            throw Self.failure(status, "cannot list enrollments")
        }
        let decoder = Timestamps.decoder()
        var found: [Enrollment] = []
        for item in items {
            guard let enrollment = try? decoder.decode(Enrollment.self, from: item) else {
                throw .keyStore("an enrollment record is corrupt")
            }
            found.append(enrollment)
        }
        return found.sorted { ($0.enrolledAt, $0.id) < ($1.enrolledAt, $1.id) }
    }

    public func delete(_ enrollmentID: String) async throws(CountersignError) {
        let removedRecord = try remove(service: recordService, account: enrollmentID)
        let removedSigningKey = try remove(service: keyService, account: enrollmentID + ".signing")
        let removedAgreementKey = try remove(service: keyService, account: enrollmentID + ".agreement")
        for kind in FactorMaterial.allCases {
            try remove(service: keyService, account: enrollmentID + "." + kind.rawValue)
        }
        guard removedRecord || removedSigningKey || removedAgreementKey else { throw .notEnrolled }
    }

    /// Factor material lives beside the keys, one item each, with the same accessibility.
    public func factorMaterial(_ kind: FactorMaterial, for enrollmentID: String) async throws(CountersignError) -> Data? {
        guard try read(service: keyService, account: enrollmentID + ".signing") != nil else { throw .notEnrolled }
        return try read(service: keyService, account: enrollmentID + "." + kind.rawValue)
    }

    public func setFactorMaterial(
        _ material: Data?, as kind: FactorMaterial, for enrollmentID: String
    ) async throws(CountersignError) {
        guard try read(service: keyService, account: enrollmentID + ".signing") != nil else { throw .notEnrolled }
        if let material {
            try add(material, service: keyService, account: enrollmentID + "." + kind.rawValue, replacing: true)
        } else {
            try remove(service: keyService, account: enrollmentID + "." + kind.rawValue)
        }
    }

    // MARK: - Keys

    private static func generateKeys() throws(CountersignError) -> (DeviceKeys, StoredKey, StoredKey) {
        guard SecureEnclave.isAvailable else {
            let signing = P256.Signing.PrivateKey()
            let agreement = P256.KeyAgreement.PrivateKey()
            return (DeviceKeys(signer: signing, agreement: agreement),
                    StoredKey(kind: .software, data: signing.rawRepresentation),
                    StoredKey(kind: .software, data: agreement.rawRepresentation))
        }
        guard let access = SecAccessControlCreateWithFlags(
            nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, .privateKeyUsage, nil) else {
            throw .keyStore("cannot create the Secure Enclave access control")
        }
        do {
            let signing = try SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
            let agreement = try SecureEnclave.P256.KeyAgreement.PrivateKey(accessControl: access)
            return (DeviceKeys(signer: SecureEnclaveSigner(key: signing), agreement: SecureEnclaveAgreementKey(key: agreement)),
                    StoredKey(kind: .secureEnclave, data: signing.dataRepresentation),
                    StoredKey(kind: .secureEnclave, data: agreement.dataRepresentation))
        } catch {
            throw .keyStore("the Secure Enclave could not create a key")
        }
    }

    private static func encode(_ key: StoredKey) throws(CountersignError) -> Data {
        do { return try JSONEncoder().encode(key) } catch { throw .keyStore("cannot encode a key") }
    }

    private static func decode(_ data: Data, what: String) throws(CountersignError) -> StoredKey {
        do { return try JSONDecoder().decode(StoredKey.self, from: data) } catch {
            throw .keyStore("a stored \(what) is corrupt")
        }
    }

    // MARK: - Keychain items

    private func baseQuery(service: String, account: String?) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecUseDataProtectionKeychain as String: true,
        ]
        if let account { query[kSecAttrAccount as String] = account }
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    /// Adds an item; an existing one is replaced only if `replacing` (keys never are).
    private func add(_ data: Data, service: String, account: String, replacing: Bool = false) throws(CountersignError) {
        var attributes = baseQuery(service: service, account: account)
        attributes[kSecValueData as String] = data
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        var status = SecItemAdd(attributes as CFDictionary, nil)
        if status == errSecDuplicateItem, replacing {
            let changes: [String: Any] = [
                kSecValueData as String: data,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            status = SecItemUpdate(baseQuery(service: service, account: account) as CFDictionary, changes as CFDictionary)
        }
        guard status == errSecSuccess else { throw Self.failure(status, "cannot store a keychain item") }
    }

    private func read(service: String, account: String) throws(CountersignError) -> Data? {
        var query = baseQuery(service: service, account: account)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else {
            throw Self.failure(status, "cannot read a keychain item")
        }
        return data
    }

    /// Returns whether there was an item to remove.
    @discardableResult
    private func remove(service: String, account: String) throws(CountersignError) -> Bool {
        let status = SecItemDelete(baseQuery(service: service, account: account) as CFDictionary)
        if status == errSecItemNotFound { return false }
        guard status == errSecSuccess else { throw Self.failure(status, "cannot delete a keychain item") }
        return true
    }

    private static func failure(_ status: OSStatus, _ what: String) -> CountersignError {
        let message = SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)"
        return .keyStore("\(what): \(message)")
    }
}

/// A Secure Enclave signing key as an `ES256Signer`: CryptoKit's signature converted to the raw
/// `r ‖ s` form JWS uses. It keeps the key's `dataRepresentation` (plain `Data`, so the signer is
/// `Sendable` whatever the SDK declares for the key type) and opens the key for each signature.
struct SecureEnclaveSigner: ES256Signer, Sendable {
    let publicKey: P256.Signing.PublicKey
    private let dataRepresentation: Data

    init(key: SecureEnclave.P256.Signing.PrivateKey) {
        self.publicKey = key.publicKey
        self.dataRepresentation = key.dataRepresentation
    }

    func signature(for data: Data) throws -> Data {
        try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: dataRepresentation)
            .signature(for: data).rawRepresentation
    }
}

/// A Secure Enclave key-agreement key as an HPKE recipient key. CryptoKit's HPKE accepts any
/// `HPKEDiffieHellmanPrivateKey`, whose only work is the Diffie-Hellman step, which the Secure
/// Enclave performs.
struct SecureEnclaveAgreementKey: DeviceAgreementKey, HPKEDiffieHellmanPrivateKey, Sendable {
    let key: SecureEnclave.P256.KeyAgreement.PrivateKey

    var publicKey: P256.KeyAgreement.PublicKey { key.publicKey }

    func sharedSecretFromKeyAgreement(with publicKeyShare: P256.KeyAgreement.PublicKey) throws -> SharedSecret {
        try key.sharedSecretFromKeyAgreement(with: publicKeyShare)
    }

    func open(ciphertext: Data, encapsulatedKey: Data, info: Data, authenticating aad: Data) throws -> Data {
        try hpkeOpen(privateKey: self, ciphertext: ciphertext, encapsulatedKey: encapsulatedKey, info: info, aad: aad)
    }
}
#endif
