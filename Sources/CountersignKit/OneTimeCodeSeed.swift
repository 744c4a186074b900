import CountersignCore
import Foundation

/// A TOTP code and the time it is valid in.
///
/// ```swift
/// let current = try await authenticator.oneTimeCode(enrollment.id)
/// print(current.code, "valid until", current.validUntil)
/// ```
public struct OneTimeCode: Sendable, Equatable {
    public let code: String
    public let validFrom: Date
    public let validUntil: Date
}

/// The TOTP seed of one enrollment as the device keeps it (`FactorMaterial.totpSeed`): the
/// opened seed and its parameters, as JSON.
struct OneTimeCodeSeed: Codable, Sendable, Equatable {
    let algorithm: TOTP.Algorithm
    let digits: Int
    let period: Int
    /// base64url.
    let seed: String

    /// RFC 4226 asks for at least 6 digits; more than 10 overflows the 31-bit truncated value.
    static let digitRange = 6...10
    /// A step longer than ten minutes is no longer a one-time code anyone would type.
    static let periodRange = 1...600

    var totp: TOTP? {
        guard let secret = Data(base64URLEncoded: seed), !secret.isEmpty else { return nil }
        return TOTP(secret: secret, algorithm: algorithm, digits: digits, period: period)
    }

    /// The seed an enrollment answer carries, accepted only when the signed receipt vouches for
    /// it: the receipt's `totp_sha256` must be the digest of exactly the `totp` object received,
    /// or a seed swapped on the way would be trusted. Nil when the server sent none (the tenant
    /// does not offer TOTP) and the receipt names none.
    static func accept(
        _ enrollment: TOTPEnrollment?, receiptDigest: String?, requested: Bool, deviceID: String,
        key: any DeviceAgreementKey
    ) throws(CountersignError) -> OneTimeCodeSeed? {
        switch (enrollment, receiptDigest) {
        case (nil, nil):
            return nil
        case (nil, _?), (_?, nil):
            throw .invalidServerResponse("the TOTP seed and the receipt's totp_sha256 do not come together")
        case (let enrollment?, let digest?):
            guard requested else { throw .invalidServerResponse("the server sent a TOTP seed that was not asked for") }
            guard let computed = try? enrollment.digest(), computed == digest else {
                throw .invalidServerResponse("the TOTP seed is not the one the enrollment receipt signs")
            }
            return try open(enrollment, deviceID: deviceID, key: key)
        }
    }

    private static func open(
        _ enrollment: TOTPEnrollment, deviceID: String, key: any DeviceAgreementKey
    ) throws(CountersignError) -> OneTimeCodeSeed {
        guard digitRange.contains(Int(clamping: enrollment.digits)), periodRange.contains(Int(clamping: enrollment.period)) else {
            throw .invalidServerResponse("the TOTP parameters are out of range")
        }
        let secret: Data
        do {
            let (encapsulatedKey, ciphertext) = try enrollment.sealedSeed.parts()
            secret = try key.open(
                ciphertext: ciphertext, encapsulatedKey: encapsulatedKey,
                info: SealedDetails.totpSeedInfo(deviceID: deviceID), authenticating: Data(deviceID.utf8))
        } catch {
            throw .invalidServerResponse("the TOTP seed could not be opened with this device's key")
        }
        guard !secret.isEmpty else { throw .invalidServerResponse("the TOTP seed is empty") }
        return OneTimeCodeSeed(
            algorithm: enrollment.algorithm, digits: Int(enrollment.digits), period: Int(enrollment.period),
            seed: secret.base64URLEncodedString)
    }

    func encoded() throws(CountersignError) -> Data {
        do { return try JSONEncoder().encode(self) } catch { throw .keyStore("cannot encode the TOTP seed") }
    }

    /// The generator a stored seed stands for.
    static func totp(from data: Data, of enrollmentID: String) throws(CountersignError) -> TOTP {
        guard let stored = try? JSONDecoder().decode(OneTimeCodeSeed.self, from: data), let totp = stored.totp else {
            throw .keyStore("the TOTP seed of enrollment \(enrollmentID) is corrupt")
        }
        return totp
    }
}

extension OneTimeCode {
    /// The code of the step `date` falls in.
    init(_ totp: TOTP, at date: Date) {
        let step = totp.step(at: date)
        let start = Date(timeIntervalSince1970: TimeInterval(step) * TimeInterval(totp.period))
        self.init(
            code: totp.code(step: step), validFrom: start, validUntil: start.addingTimeInterval(TimeInterval(totp.period)))
    }
}
