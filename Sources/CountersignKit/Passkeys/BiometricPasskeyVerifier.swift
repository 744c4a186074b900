import Crypto
import Foundation

/// User verification by the device's biometric factor, through the same `BiometricKeys` the
/// push approvals use: the verifier has a biometric key sign a fresh random challenge and
/// checks the signature with the key's public half. A verification counts only when the
/// platform released the key, not when a callback said so.
///
/// With no `key`, each verification makes a new biometric key and uses it once, so the app has
/// no handle to keep; with `key` (for example the enrollment's biometric key), that key is used.
///
/// ```swift
/// // Apple platforms: Face ID or Touch ID, through the Secure Enclave.
/// let verifier = BiometricPasskeyVerifier(keys: SecureEnclaveBiometricKeys())
/// // Elsewhere (tests, a terminal): a stand-in released by whatever confirmation fits.
/// let standIn = BiometricPasskeyVerifier(keys: SoftwareBiometricKeys { _ in .verified })
/// ```
public struct BiometricPasskeyVerifier: PasskeyUserVerifier {
    private let keys: any BiometricKeys
    private let key: BiometricKey?

    public init(keys: any BiometricKeys, key: BiometricKey? = nil) {
        self.keys = keys
        self.key = key
    }

    public func verifyUser(_ request: PasskeyVerificationRequest) async -> PasskeyUserVerification {
        do {
            let key = if let key { key } else { try await keys.createKey() }
            var generator = SystemRandomNumberGenerator()
            let challenge = Data((0..<32).map { _ in generator.next() as UInt8 })
            let signature = try await keys.sign(challenge, with: key.handle, prompt: request.prompt)
            guard let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                  key.publicKey.isValidSignature(parsed, for: challenge)
            else { return .failed }
            return .verified
        } catch {
            switch error {
            case .failed: return .failed
            case .cancelled: return .cancelled
            case .unavailable: return .unavailable
            }
        }
    }
}
