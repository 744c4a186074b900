import CountersignCore
import Crypto
#if canImport(CryptoKit)
// CryptoKit does not declare its types Sendable in the iOS 17 and 18 SDKs (docs/sdk.md).
@preconcurrency import CryptoKit
#endif
import _CryptoExtras
import Foundation

/// The signing key a PIN stands for. The device keeps only a random salt; the key is derived
/// again from the PIN each time it is needed, and the server holds its public key.
///
/// Because the device stores no public key and no hash of the PIN, a copy of its storage cannot
/// be used to test guesses: every PIN yields a valid key, and only the server can tell the right
/// one, counting the wrong ones as it goes.
///
/// Derivation: scrypt(PIN, salt, N = 2^15, r = 8, p = 1) → 32 bytes → HKDF-SHA256 with info
/// `countersign/v1/pin-key` ‖ counter → a P-256 scalar (counter 0, then 1, 2, … in the
/// negligible case the bytes are not one).
///
/// ```swift
/// let salt = PINKey.newSalt()
/// let key = try PINKey(pin: "4921", salt: salt)
/// let jwk = ECPublicJWK(key.publicKey)   // sent at enrollment as `pin_key`
/// ```
public struct PINKey: Sendable {
    /// Bytes of salt kept per enrollment.
    public static let saltLength = 32
    /// Shortest and longest PIN, in digits.
    public static let lengths = 4...12

    static let scryptRounds = 1 << 15
    static let scryptBlockSize = 8
    static let scryptParallelism = 1
    static let info = Data("countersign/v1/pin-key".utf8)

    public let privateKey: P256.Signing.PrivateKey

    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// Derives the key of `pin` under `salt`. Takes a noticeable fraction of a second and 32 MiB
    /// of memory by design: that is what each guess costs an attacker too.
    public init(pin: String, salt: Data) throws(CountersignError) {
        try Self.validate(pin)
        guard salt.count == Self.saltLength else {
            throw .keyStore("a PIN salt must be \(Self.saltLength) bytes")
        }
        let stretched: SymmetricKey
        do {
            stretched = try KDF.Scrypt.deriveKey(
                from: Data(pin.utf8), salt: salt, outputByteCount: 32, rounds: Self.scryptRounds,
                blockSize: Self.scryptBlockSize, parallelism: Self.scryptParallelism)
        } catch {
            throw .keyStore("the PIN key could not be derived: \(error)")
        }
        for counter in UInt8.min...UInt8.max {
            let scalar = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: stretched, info: Self.info + Data([counter]), outputByteCount: 32)
            let bytes = scalar.withUnsafeBytes { Data($0) }
            if let key = try? P256.Signing.PrivateKey(rawRepresentation: bytes) {
                self.privateKey = key
                return
            }
        }
        throw .keyStore("no PIN key could be derived from this PIN and salt")
    }

    /// A fresh random salt for a new PIN.
    public static func newSalt() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<saltLength).map { _ in generator.next() as UInt8 })
    }

    /// Throws `.invalidRequest` unless `pin` is 4 to 12 ASCII digits.
    public static func validate(_ pin: String) throws(CountersignError) {
        guard lengths.contains(pin.utf8.count), pin.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw .invalidRequest("a PIN must be \(lengths.lowerBound) to \(lengths.upperBound) digits")
        }
    }

    /// The base64url raw signature of `message`, as `pin_signature` carries it.
    func signature(for message: Data) throws(CountersignError) -> String {
        do {
            let signature: P256.Signing.ECDSASignature = try privateKey.signature(for: message)
            return signature.rawRepresentation.base64URLEncodedString
        } catch {
            throw .keyStore("the PIN key could not sign")
        }
    }
}
