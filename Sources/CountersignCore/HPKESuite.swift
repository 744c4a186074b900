import Crypto
import Foundation

/// The HPKE (RFC 9180) suites of the device protocol. Request details are sealed with the
/// strongest suite both the tenant allows and the device announced at enrollment.
///
/// - `p256`: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM. Every device has this key;
///   P-256 rather than X25519 so that it can be a Secure Enclave key.
/// - `xwing`: the X-Wing KEM (ML-KEM-768 combined with X25519), HKDF-SHA256, AES-256-GCM: a
///   hybrid that stays confidential if either half holds, so details recorded today cannot be
///   opened by a future quantum computer. A device that sends an X-Wing key with its
///   enrollment gets it (`EnrollmentRequest.xwingKey`).
public enum HPKESuite: String, Sendable, CaseIterable, Codable {
    case p256 = "DHKEM-P256-HKDF-SHA256/HKDF-SHA256/AES-256-GCM"
    case xwing = "X-Wing-ML-KEM-768-X25519/HKDF-SHA256/AES-256-GCM"

    /// The P-256 suite's HPKE parameters (the suite of enrollment secrets such as the TOTP seed).
    /// Computed, not stored: CryptoKit's `HPKE.Ciphersuite` is not `Sendable`.
    public static var countersign: HPKE.Ciphersuite { .P256_SHA256_AES_GCM_256 }
    /// The P-256 suite's name, as written in sealed messages and in `docs/protocol.md`.
    public static let name = HPKESuite.p256.rawValue

    /// The name as written in sealed messages (`SealedDetails.suite`).
    public var name: String { rawValue }

    #if !canImport(CryptoKit) || (compiler(>=6.2) && !COUNTERSIGN_CRYPTOKIT_WITHOUT_XWING)
    /// The X-Wing suite's HPKE parameters. swift-crypto implements X-Wing itself on Linux; on
    /// Apple platforms it is CryptoKit's, from macOS 26 and iOS 26, and only in the SDKs of those
    /// systems (Swift 6.2 and later). Built with an older SDK, the X-Wing code is left out.
    @available(macOS 26, iOS 26, *)
    public static var xwingCiphersuite: HPKE.Ciphersuite { .XWingMLKEM768X25519_SHA256_AES_GCM_256 }
    #endif

    /// Whether this build on this system seals and opens X-Wing: a server or device without it
    /// uses P-256.
    public static var xwingAvailable: Bool {
        #if !canImport(CryptoKit) || (compiler(>=6.2) && !COUNTERSIGN_CRYPTOKIT_WITHOUT_XWING)
        if #available(macOS 26, iOS 26, *) { true } else { false }
        #else
        false
        #endif
    }

    /// Sealing to a suite this platform lacks (X-Wing before macOS 26 and iOS 26).
    public struct Unavailable: Error, Sendable, Equatable {
        public let suite: HPKESuite
    }

    /// The length of an X-Wing public key (ML-KEM-768's 1184 bytes and X25519's 32).
    public static let xwingPublicKeyLength = 1216
}
