import CountersignCore
import Crypto
import Foundation
import _CryptoExtras

/// The public half of an RSA token-signing key as a JWK (RFC 7518 §6.3.1): the modulus `n`
/// and exponent `e`, each a big-endian unsigned integer in base64url with no leading zero
/// octets (RFC 7518 §2, "Base64urlUInt"), which is also what makes the thumbprint unique.
public struct RSAPublicJWK: Codable, Sendable, Hashable {
    public var kty: String
    public var n: String
    public var e: String

    init(_ key: _RSA.Signing.PublicKey) throws {
        let primitives = try key.getKeyPrimitives()
        kty = "RSA"
        n = Self.base64URLUInt(primitives.modulus)
        e = Self.base64URLUInt(primitives.publicExponent)
    }

    private static func base64URLUInt(_ bytes: Data) -> String {
        Data(bytes.drop { $0 == 0 }).base64URLEncodedString
    }

    /// The RFC 7638 thumbprint: SHA-256 over `e`, `kty`, `n` in lexicographic order.
    public var thumbprint: String {
        let members = JSONValue.object(["e": .string(e), "kty": .string(kty), "n": .string(n)])
        return Data(SHA256.hash(data: members.canonicalData)).base64URLEncodedString
    }
}
