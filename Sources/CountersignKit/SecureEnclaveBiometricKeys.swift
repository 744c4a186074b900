// Built on Apple platforms only (LocalAuthentication, the Security framework and CryptoKit's
// Secure Enclave keys). It is a thin adapter: every decision about when a biometric key is used
// lives in the platform-independent code that calls it.
#if canImport(LocalAuthentication) && canImport(Security) && canImport(CryptoKit)
import CountersignCore
import Crypto
import Foundation
import LocalAuthentication
import Security

/// `BiometricKeys` in the Secure Enclave: each key is created with the `.biometryCurrentSet`
/// access control, so the enclave signs only after Face ID or Touch ID recognises one of the
/// fingers or faces enrolled when the key was made. Adding a finger or face invalidates the key
/// (the provider then reports `.unavailable`, and a PIN fallback or a new enrollment is needed).
///
/// The handle is the key's `dataRepresentation`: a blob that only this device's Secure Enclave
/// can use.
///
/// ```swift
/// let authenticator = CountersignAuthenticator(
///     keyStore: KeychainKeyStore(), biometricKeys: SecureEnclaveBiometricKeys())
/// ```
public struct SecureEnclaveBiometricKeys: BiometricKeys {
    public init() {}

    public var biometry: Biometry? {
        get async {
            let context = LAContext()
            guard context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: nil) else { return nil }
            switch context.biometryType {
            case .faceID: return .face
            case .touchID: return .fingerprint
            default: return .other
            }
        }
    }

    public func createKey() async throws(BiometricFailure) -> BiometricKey {
        guard SecureEnclave.isAvailable,
              LAContext().canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: nil),
              let access = SecAccessControlCreateWithFlags(
                nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, [.privateKeyUsage, .biometryCurrentSet], nil)
        else { throw .unavailable }
        guard let key = try? SecureEnclave.P256.Signing.PrivateKey(accessControl: access) else { throw .unavailable }
        return BiometricKey(publicKey: key.publicKey, handle: key.dataRepresentation)
    }

    /// Evaluates the biometric policy first, so that the outcome (recognised, cancelled, not
    /// available) is known before the enclave is asked, then signs with the evaluated context.
    public func sign(_ message: Data, with handle: Data, prompt: String) async throws(BiometricFailure) -> Data {
        let context = LAContext()
        do {
            _ = try await context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: prompt)
        } catch let error as LAError {
            switch error.code {
            case .userCancel, .appCancel, .systemCancel: throw .cancelled
            case .biometryNotAvailable, .biometryNotEnrolled, .biometryLockout: throw .unavailable
            default: throw .failed
            }
        } catch {
            throw .failed
        }
        guard let key = try? SecureEnclave.P256.Signing.PrivateKey(
            dataRepresentation: handle, authenticationContext: context) else { throw .unavailable }
        guard let signature = try? key.signature(for: message) else { throw .failed }
        return signature.rawRepresentation
    }
}
#endif
