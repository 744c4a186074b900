import Foundation

/// The factors to enroll beside the device key (`CountersignAuthenticator.enroll`).
///
/// ```swift
/// let factors = EnrollmentFactors(pin: enteredPIN, biometric: true, totp: true)
/// let enrollment = try await authenticator.enroll(
///     uri: scannedText, deviceName: "Ada's iPhone", platform: .ios, factors: factors)
/// ```
public struct EnrollmentFactors: Sendable {
    /// The user's new PIN, 4 to 12 digits; nil for none. It is not stored: only the salt its
    /// key is derived with.
    public var pin: String?
    /// Whether to create a key the platform releases only after a biometric check.
    public var biometric: Bool
    /// Whether to ask for a TOTP seed, for one-time codes when push is not an option.
    public var totp: Bool

    public init(pin: String? = nil, biometric: Bool = false, totp: Bool = false) {
        self.pin = pin
        self.biometric = biometric
        self.totp = totp
    }
}
