import Crypto
import Foundation

/// One-time passwords: HOTP (RFC 4226) and TOTP (RFC 6238), with HMAC-SHA-1, SHA-256 or
/// SHA-512. Codes keep their leading zeros.
///
/// ```swift
/// let totp = TOTP(secret: seed)                       // SHA-1, 6 digits, 30 s
/// let code = totp.code(at: Date())                    // "287082"
/// ```
public struct TOTP: Sendable, Equatable {
    public enum Algorithm: String, Codable, Sendable, CaseIterable {
        case sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512"
    }

    public var secret: Data
    public var algorithm: Algorithm
    public var digits: Int
    public var period: Int

    public init(secret: Data, algorithm: Algorithm = .sha1, digits: Int = 6, period: Int = 30) {
        self.secret = secret
        self.algorithm = algorithm
        self.digits = digits
        self.period = period
    }

    /// The time step of `date` (T0 = 0): `floor(unix time / period)`.
    public func step(at date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / Double(period)).rounded(.down))
    }

    /// The code for the step `date` falls in.
    public func code(at date: Date) -> String {
        code(step: step(at: date))
    }

    /// The HOTP value of counter `step` (RFC 4226 §5.3: dynamic truncation, then modulo 10^digits).
    public func code(step: Int64) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let key = SymmetricKey(data: secret)
        let mac: Data = switch algorithm {
        case .sha1: Data(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
        case .sha256: Data(HMAC<SHA256>.authenticationCode(for: message, using: key))
        case .sha512: Data(HMAC<SHA512>.authenticationCode(for: message, using: key))
        }
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - value.count)) + value
    }

    /// The step in `date - window … date + window` steps whose code is `code`, if any. The
    /// comparison takes the same time whichever step matches.
    public func matchingStep(of code: String, at date: Date, window: Int64 = 1) -> Int64? {
        let now = step(at: date)
        var found: Int64?
        for candidate in (now - window)...(now + window) {
            let expected = Data(self.code(step: candidate).utf8)
            var difference = UInt8(expected.count == code.utf8.count ? 0 : 1)
            for (a, b) in zip(expected, Data(code.utf8)) { difference |= a ^ b }
            if difference == 0, found == nil { found = candidate }
        }
        return found
    }
}

/// The TOTP seed a device receives at enrollment when it asks for one: the parameters in the
/// clear (and in the signed receipt), the seed sealed to the device's HPKE key.
public struct TOTPEnrollment: Codable, Sendable, Equatable {
    public var algorithm: TOTP.Algorithm
    public var digits: Int64
    public var period: Int64
    /// The 20-byte seed, sealed with `SealedDetails.sealTOTPSeed`.
    public var sealedSeed: SealedDetails

    public init(algorithm: TOTP.Algorithm, digits: Int64, period: Int64, sealedSeed: SealedDetails) {
        self.algorithm = algorithm
        self.digits = digits
        self.period = period
        self.sealedSeed = sealedSeed
    }

    enum CodingKeys: String, CodingKey {
        case algorithm, digits, period
        case sealedSeed = "sealed_seed"
    }

    /// base64url SHA-256 of the canonical JSON of this object, which the signed receipt carries
    /// as `totp_sha256` so the device knows the server sent it.
    public func digest() throws -> String {
        Data(SHA256.hash(data: try JSONValue(encoding: self).canonicalData)).base64URLEncodedString
    }
}

extension SealedDetails {
    /// `countersign/v1/totp-seed` ‖ 0x00 ‖ device id.
    public static func totpSeedInfo(deviceID: String) -> Data {
        Data("countersign/v1/totp-seed".utf8) + Data([0]) + Data(deviceID.utf8)
    }

    /// Seals a TOTP seed to a device's HPKE key; the device id is also the additional data.
    public static func sealTOTPSeed(_ seed: Data, to key: P256.KeyAgreement.PublicKey, deviceID: String) throws -> SealedDetails {
        var sender = try HPKE.Sender(recipientKey: key, ciphersuite: HPKESuite.countersign, info: totpSeedInfo(deviceID: deviceID))
        let ciphertext = try sender.seal(seed, authenticating: Data(deviceID.utf8))
        return SealedDetails(
            suite: HPKESuite.name, encapsulatedKey: sender.encapsulatedKey.base64URLEncodedString,
            ciphertext: ciphertext.base64URLEncodedString)
    }
}
