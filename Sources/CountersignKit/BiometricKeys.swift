import CountersignCore
import Crypto
#if canImport(CryptoKit)
// CryptoKit does not declare its types Sendable in the iOS 17 and 18 SDKs (docs/sdk.md).
@preconcurrency import CryptoKit
#endif
import Foundation

/// The kind of biometric check, as an answer reports it (`ApprovalResponse.biometry`).
public enum Biometry: String, Sendable, Equatable, CaseIterable {
    case face, fingerprint, other
}

/// Why a biometric key did not sign.
public enum BiometricFailure: Error, Sendable, Equatable {
    /// The user was not recognised (or chose the platform's own fallback button).
    case failed
    /// The user dismissed the prompt.
    case cancelled
    /// The platform cannot check biometry now: none enrolled, locked out, or the key is gone
    /// (biometry changed since enrollment).
    case unavailable
}

/// A P-256 key made for the `biometric` factor: its public half goes to the server as
/// `biometric_key`, and `handle` is what the provider needs to use the key again. The
/// authenticator keeps the handle in the `KeyStore` (`FactorMaterial.biometricKey`).
public struct BiometricKey: Sendable {
    public let publicKey: P256.Signing.PublicKey
    public let handle: Data

    public init(publicKey: P256.Signing.PublicKey, handle: Data) {
        self.publicKey = publicKey
        self.handle = handle
    }
}

/// Keys the platform uses only after a biometric check. Approving a request that requires the
/// `biometric` factor signs the answer with such a key, so the server learns that the check
/// passed from a signature it can verify, not from the app's say-so.
///
/// `SecureEnclaveBiometricKeys` is the provider on Apple platforms; `SoftwareBiometricKeys`
/// stands in where there is no such hardware (tests, the terminal authenticator).
///
/// ```swift
/// let authenticator = CountersignAuthenticator(
///     keyStore: KeychainKeyStore(), biometricKeys: SecureEnclaveBiometricKeys())
/// ```
public protocol BiometricKeys: Sendable {
    /// The biometry the platform will use, when it can tell.
    var biometry: Biometry? { get async }
    /// Creates a key that signs only after a biometric check.
    func createKey() async throws(BiometricFailure) -> BiometricKey
    /// Asks for the biometric check, showing `prompt`, and signs `message` with the key behind
    /// `handle`. Returns the raw `r ‖ s` signature.
    func sign(_ message: Data, with handle: Data, prompt: String) async throws(BiometricFailure) -> Data
}

/// A stand-in for a platform biometric key: a software P-256 key, kept in the `KeyStore` as the
/// handle, that signs only when `verify` says the user passed. Nothing but the caller's word
/// protects it, so it is for tests and for platforms without biometric hardware, where
/// `verify` can ask for whatever confirmation makes sense (the terminal asks on its prompt).
///
/// ```swift
/// let standIn = SoftwareBiometricKeys { prompt in
///     await askUser(prompt) ? .verified : .cancelled
/// }
/// ```
public struct SoftwareBiometricKeys: BiometricKeys {
    /// What the injected check concluded.
    public enum Verification: Sendable, Equatable {
        case verified, failed, cancelled, unavailable
    }

    private let reportedBiometry: Biometry
    private let verify: @Sendable (String) async -> Verification

    /// - Parameters:
    ///   - biometry: the kind reported in answers.
    ///   - verify: decides, for each prompt, whether the user passed.
    public init(biometry: Biometry = .other, verify: @escaping @Sendable (String) async -> Verification) {
        self.reportedBiometry = biometry
        self.verify = verify
    }

    public var biometry: Biometry? {
        get async { reportedBiometry }
    }

    public func createKey() async throws(BiometricFailure) -> BiometricKey {
        let key = P256.Signing.PrivateKey()
        return BiometricKey(publicKey: key.publicKey, handle: key.rawRepresentation)
    }

    public func sign(_ message: Data, with handle: Data, prompt: String) async throws(BiometricFailure) -> Data {
        switch await verify(prompt) {
        case .verified: break
        case .failed: throw .failed
        case .cancelled: throw .cancelled
        case .unavailable: throw .unavailable
        }
        guard let key = try? P256.Signing.PrivateKey(rawRepresentation: handle),
              let signature: P256.Signing.ECDSASignature = try? key.signature(for: message) else { throw .unavailable }
        return signature.rawRepresentation
    }
}
