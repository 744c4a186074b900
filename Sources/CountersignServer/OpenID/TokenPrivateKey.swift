import CountersignCore
import Crypto
import Foundation
import JWTKit
import _CryptoExtras

/// A token-signing key's public half, as published in the JWKS and stored beside the sealed
/// private key.
public enum TokenPublicKey: Sendable, Hashable {
    case ec(ECPublicJWK)
    case rsa(RSAPublicJWK)

    public var algorithm: TokenSigningAlgorithm {
        switch self {
        case .ec: .es256
        case .rsa: .rs256
        }
    }

    /// The RFC 7638 thumbprint, which names the key (`kid`).
    public var thumbprint: String {
        switch self {
        case .ec(let jwk): jwk.thumbprint
        case .rsa(let jwk): jwk.thumbprint
        }
    }

    /// The JWK's members as JSON.
    var json: JSONValue {
        get throws {
            switch self {
            case .ec(let jwk): try JSONValue(encoding: jwk)
            case .rsa(let jwk): try JSONValue(encoding: jwk)
            }
        }
    }
}

/// A token-signing private key of either algorithm, as it is generated, sealed and opened. The
/// signatures are jwt-kit's (`add(to:kid:)`): ES256 as the 64-byte `r ‖ s` (RFC 7518 §3.4),
/// RS256 as RSASSA-PKCS1-v1_5 with SHA-256 (§3.3).
enum TokenPrivateKey: Sendable {
    case es256(P256.Signing.PrivateKey)
    case rs256(_RSA.Signing.PrivateKey)

    /// RSA keys are 2048 bits, the least RFC 7518 §3.3 allows: a key signs for one rotation
    /// period only, and every relying party and its library verifies this size.
    static let rsaKeySize = _RSA.Signing.KeySize.bits2048

    /// A new key. An RSA key takes tens to hundreds of milliseconds to find; call this outside
    /// any lock.
    static func generate(_ algorithm: TokenSigningAlgorithm) throws -> TokenPrivateKey {
        switch algorithm {
        case .es256: .es256(P256.Signing.PrivateKey())
        case .rs256: .rs256(try _RSA.Signing.PrivateKey(keySize: rsaKeySize))
        }
    }

    /// A key from the bytes `sealable` gave; RSA keys under 2048 bits are refused.
    init(algorithm: TokenSigningAlgorithm, opening bytes: Data) throws {
        switch algorithm {
        case .es256: self = .es256(try P256.Signing.PrivateKey(rawRepresentation: bytes))
        case .rs256: self = .rs256(try _RSA.Signing.PrivateKey(derRepresentation: bytes))
        }
    }

    /// The bytes sealed under the master key: the P-256 scalar, or the RSA key as PKCS#1 DER.
    var sealable: Data {
        switch self {
        case .es256(let key): key.rawRepresentation
        case .rs256(let key): key.derRepresentation
        }
    }

    var algorithm: TokenSigningAlgorithm {
        switch self {
        case .es256: .es256
        case .rs256: .rs256
        }
    }

    var publicKey: TokenPublicKey {
        get throws {
            switch self {
            case .es256(let key): .ec(ECPublicJWK(key.publicKey))
            case .rs256(let key): .rsa(try RSAPublicJWK(key.publicKey))
            }
        }
    }

    /// Adds this key to `keys` under `kid`, where it signs tokens with its algorithm and verifies
    /// the tokens it signed.
    func add(to keys: JWTKeyCollection, kid: String) async throws {
        switch self {
        case .es256(let key): await keys.add(ecdsa: try ES256PrivateKey(backing: key), kid: JWKIdentifier(string: kid))
        case .rs256(let key):
            await keys.add(rsa: try JWTKit.Insecure.RSA.PrivateKey(backing: key), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        }
    }
}
