import CountersignCore
import Foundation

/// The factors an enrollment keeps beside its device key: changing the PIN, one-time codes, and
/// which factors the device can give.
extension CountersignAuthenticator {
    /// Replaces the PIN: the current PIN's key signs the new PIN's public key, and the new salt
    /// is kept once the server has accepted it. A wrong current PIN counts against the limit as
    /// it does when answering a request: `.wrongPIN(attemptsRemaining:)`, then
    /// `.userDeregistered` (the enrollment is erased).
    ///
    /// ```swift
    /// do {
    ///     _ = try await authenticator.changePIN(enrollment.id, from: "4921", to: "738201")
    /// } catch .wrongPIN(let remaining) {
    ///     showWrongPIN(attemptsLeft: remaining)
    /// }
    /// ```
    public func changePIN(
        _ enrollmentID: Enrollment.ID, from old: String, to new: String
    ) async throws(CountersignError) -> DeviceDescription {
        try PINKey.validate(old)
        try PINKey.validate(new)
        guard let salt = try await keyStore.factorMaterial(.pinSalt, for: enrollmentID) else { throw .pinNotEnrolled }
        let enrollment = try await keyStore.enrollment(enrollmentID)
        let current = try PINKey(pin: old, salt: salt)
        let newSalt = PINKey.newSalt()
        let newKey = ECPublicJWK(try PINKey(pin: new, salt: newSalt).publicKey)
        let change = PINChange(
            pinKey: newKey,
            pinSignature: try current.signature(
                for: FactorProof.pinChangeMessage(deviceID: enrollment.deviceID, newKey: newKey)))
        let description = try await withDevice(enrollmentID) { client throws(CountersignError) in
            do throws(CountersignError) {
                return try await client.send(
                    .put, client.endpoints.pin, json: change, expecting: DeviceDescription.self,
                    what: "device description")
            } catch .server(_, DeviceErrorCode.factorNotEnrolled.rawValue, _) {
                throw .pinNotEnrolled
            }
        }
        try await keyStore.setFactorMaterial(newSalt, as: .pinSalt, for: enrollmentID)
        return description
    }

    /// The TOTP code of an enrollment that received a seed, for `date` (default: now). Works
    /// offline; the server accepts a code one step early or late, once.
    ///
    /// ```swift
    /// let current = try await authenticator.oneTimeCode(enrollment.id)
    /// codeLabel.text = current.code
    /// ```
    public func oneTimeCode(_ enrollmentID: Enrollment.ID, at date: Date? = nil) async throws(CountersignError) -> OneTimeCode {
        guard let stored = try await keyStore.factorMaterial(.totpSeed, for: enrollmentID) else {
            throw .totpNotEnrolled
        }
        return OneTimeCode(try OneTimeCodeSeed.totp(from: stored, of: enrollmentID), at: date ?? now())
    }

    /// Which factors this device can give for an enrollment: what it keeps locally, whatever
    /// the server holds (`deviceStatus(_:).factors`).
    ///
    /// ```swift
    /// let factors = try await authenticator.localFactors(enrollment.id)
    /// changePINButton.isHidden = !factors.pin
    /// ```
    public func localFactors(_ enrollmentID: Enrollment.ID) async throws(CountersignError) -> DeviceDescription.EnrolledFactors {
        _ = try await keyStore.enrollment(enrollmentID)
        return DeviceDescription.EnrolledFactors(
            pin: try await keyStore.factorMaterial(.pinSalt, for: enrollmentID) != nil,
            biometric: try await keyStore.factorMaterial(.biometricKey, for: enrollmentID) != nil,
            totp: try await keyStore.factorMaterial(.totpSeed, for: enrollmentID) != nil)
    }
}

extension CountersignAuthenticator {
    /// Adds a PIN, a biometric key or both to an enrollment that lacks them, without enrolling
    /// again: the new public keys go to the server in a request signed by the device key, and the
    /// PIN's salt and the biometric key's handle are kept once the server has accepted them. What
    /// a request's alternatives lack (`AuthenticatorGroup.missingFactors`,
    /// `CountersignError.factorsNotEnrolled`) is added this way.
    ///
    /// ```swift
    /// _ = try await authenticator.addFactors(enrollment.id, EnrollmentFactors(pin: "4921"))
    /// ```
    public func addFactors(
        _ enrollmentID: Enrollment.ID, _ factors: EnrollmentFactors
    ) async throws(CountersignError) -> DeviceDescription {
        guard factors.pin != nil || factors.biometric else {
            throw .invalidRequest("name a factor to add: a PIN or a biometric key")
        }
        guard !factors.totp else { throw .invalidRequest("a one-time code seed is given only at enrollment") }
        if factors.pin != nil, try await keyStore.factorMaterial(.pinSalt, for: enrollmentID) != nil {
            throw .invalidRequest("this enrollment has a PIN already; change it with changePIN")
        }
        if factors.biometric, try await keyStore.factorMaterial(.biometricKey, for: enrollmentID) != nil {
            throw .invalidRequest("this enrollment has a biometric key already")
        }
        if let pin = factors.pin { try PINKey.validate(pin) }
        if factors.biometric, biometricKeys == nil {
            throw .invalidRequest("this authenticator has no biometric keys to enroll")
        }
        let material = try await factorMaterial(for: factors)
        let addition = FactorAddition(pinKey: material.keys.pin, biometricKey: material.keys.biometric)
        let description = try await withDevice(enrollmentID) { client throws(CountersignError) in
            try await client.send(.post, client.endpoints.factors, json: addition, expecting: DeviceDescription.self,
                                  what: "device description")
        }
        try await keyStore.setFactorMaterial(material.pinSalt, as: .pinSalt, for: enrollmentID)
        try await keyStore.setFactorMaterial(material.biometricHandle, as: .biometricKey, for: enrollmentID)
        return description
    }
}
