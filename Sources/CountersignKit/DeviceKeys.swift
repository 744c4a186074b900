import CountersignCore
import Crypto
#if canImport(CryptoKit)
// CryptoKit does not declare its types Sendable in the iOS 17 and 18 SDKs (docs/sdk.md).
@preconcurrency import CryptoKit
#endif
import Foundation

/// The device's HPKE key (suite `HPKESuite.countersign`): the server seals request details to
/// its public key, and only this device can open them. A software key or a Secure Enclave key
/// can stand behind it.
///
/// ```swift
/// let details = try keys.agreement.open(
///     ciphertext: sealed, encapsulatedKey: enc, info: info, authenticating: aad)
/// ```
public protocol DeviceAgreementKey {
    var publicKey: P256.KeyAgreement.PublicKey { get }
    /// Opens one HPKE (base mode) message sealed to `publicKey`.
    func open(ciphertext: Data, encapsulatedKey: Data, info: Data, authenticating aad: Data) throws -> Data
}

extension P256.KeyAgreement.PrivateKey: DeviceAgreementKey {
    public func open(ciphertext: Data, encapsulatedKey: Data, info: Data, authenticating aad: Data) throws -> Data {
        try hpkeOpen(privateKey: self, ciphertext: ciphertext, encapsulatedKey: encapsulatedKey, info: info, aad: aad)
    }
}

/// HPKE base-mode open with the protocol's suite, for any private key HPKE accepts (a software
/// key, or a Secure Enclave key behind a wrapper).
func hpkeOpen<Key: HPKEDiffieHellmanPrivateKey>(
    privateKey: Key, ciphertext: Data, encapsulatedKey: Data, info: Data, aad: Data
) throws -> Data {
    var recipient = try HPKE.Recipient(
        privateKey: privateKey, ciphersuite: HPKESuite.countersign, info: info, encapsulatedKey: encapsulatedKey)
    return try recipient.open(ciphertext, authenticating: aad)
}

/// The two private keys of one enrollment, both generated on the device and never exported:
/// `signer` signs the enrollment proof and every request, `agreement` opens what the server
/// seals to the device.
///
/// ```swift
/// let keys = try await keyStore.keys(for: enrollment.id)
/// let jwk = ECPublicJWK(keys.signer.publicKey)
/// ```
public struct DeviceKeys: Sendable {
    public let signer: any ES256Signer & Sendable
    public let agreement: any DeviceAgreementKey & Sendable

    public init(signer: any ES256Signer & Sendable, agreement: any DeviceAgreementKey & Sendable) {
        self.signer = signer
        self.agreement = agreement
    }
}

/// The enrollment's X-Wing key (`HPKESuite.xwing`), kept as its 32-byte seed with the other
/// factor material (`FactorMaterial.xwingSeed`). It is a software key: the Secure Enclave holds
/// only P-256 keys. Where the platform's CryptoKit lacks X-Wing (before iOS 26 and macOS 26) no
/// key is made, and the enrollment announces P-256 only.
struct XWingAgreementKey: Sendable {
    let seed: Data
    /// The raw public key (1216 bytes).
    let publicKey: Data
    private let opener: @Sendable (Data, Data, Data, Data) throws -> Data

    /// A new key; nil where the platform has no X-Wing.
    static func generate() -> XWingAgreementKey? {
        #if !canImport(CryptoKit) || (compiler(>=6.2) && !COUNTERSIGN_CRYPTOKIT_WITHOUT_XWING)
        guard #available(macOS 26, iOS 26, *), let key = try? XWingMLKEM768X25519.PrivateKey.generate() else { return nil }
        return XWingAgreementKey(key)
        #else
        return nil
        #endif
    }

    /// The key a stored seed restores; nil for a seed that is not one, or where the platform has no X-Wing.
    init?(seed: Data) {
        #if !canImport(CryptoKit) || (compiler(>=6.2) && !COUNTERSIGN_CRYPTOKIT_WITHOUT_XWING)
        guard #available(macOS 26, iOS 26, *),
              let key = try? XWingMLKEM768X25519.PrivateKey(seedRepresentation: seed, publicKey: nil) else { return nil }
        self.init(key)
        #else
        return nil
        #endif
    }

    #if !canImport(CryptoKit) || (compiler(>=6.2) && !COUNTERSIGN_CRYPTOKIT_WITHOUT_XWING)
    @available(macOS 26, iOS 26, *)
    private init(_ key: XWingMLKEM768X25519.PrivateKey) {
        seed = key.seedRepresentation
        publicKey = key.publicKey.rawRepresentation
        opener = { ciphertext, encapsulatedKey, info, aad in
            var recipient = try HPKE.Recipient(
                privateKey: key, ciphersuite: HPKESuite.xwingCiphersuite, info: info, encapsulatedKey: encapsulatedKey)
            return try recipient.open(ciphertext, authenticating: aad)
        }
    }
    #endif

    /// Opens one HPKE (base mode) message sealed to this key.
    func open(_ ciphertext: Data, _ encapsulatedKey: Data, _ info: Data, _ aad: Data) throws -> Data {
        try opener(ciphertext, encapsulatedKey, info, aad)
    }
}
