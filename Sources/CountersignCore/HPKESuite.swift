import Crypto
import Foundation

/// The one HPKE (RFC 9180) suite of the device protocol: DHKEM(P-256, HKDF-SHA256),
/// HKDF-SHA256, AES-256-GCM. P-256 rather than X25519 so that the device's private key can be
/// a Secure Enclave key; the cost (about 0.26 ms per seal and open) is small beside a push.
public enum HPKESuite {
    public static let countersign: HPKE.Ciphersuite = .P256_SHA256_AES_GCM_256
    /// The identifier written in enrollment records and in `docs/protocol.md`.
    public static let name = "DHKEM-P256-HKDF-SHA256/HKDF-SHA256/AES-256-GCM"
}
