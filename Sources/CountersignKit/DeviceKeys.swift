import CountersignCore
import Crypto
import Foundation

/// The device's HPKE key (suite `HPKESuite.countersign`): the server seals request details to
/// its public key, and only this device can open them. A software key or a Secure Enclave key
/// can stand behind it.
///
/// ```swift
/// let details = try keys.agreement.open(
///     ciphertext: sealed, encapsulatedKey: enc, info: info, authenticating: aad)
/// ```
public protocol DeviceAgreementKey: Sendable {
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
    public let signer: any ES256Signer
    public let agreement: any DeviceAgreementKey

    public init(signer: any ES256Signer, agreement: any DeviceAgreementKey) {
        self.signer = signer
        self.agreement = agreement
    }
}
