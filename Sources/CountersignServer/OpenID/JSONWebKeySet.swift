import CountersignCore
import Foundation

/// A tenant's published token-signing keys as a JWK Set (RFC 7517 §5), served at
/// `<issuer>/jwks`: signature keys named by their thumbprints, ES256 (EC P-256) and RS256
/// (RSA) alike, each stating its algorithm so that a verifier never tries a key with another.
struct JSONWebKeySet: Encodable, Sendable {
    struct Key: Encodable, Sendable, Equatable {
        let kty: String
        var crv: String? = nil
        var x: String? = nil
        var y: String? = nil
        var n: String? = nil
        var e: String? = nil
        let kid: String
        let use = "sig"
        let alg: String

        init(_ key: TokenSigningKey) {
            self.init(id: key.id, publicKey: key.publicKey)
        }

        init(id: String, publicKey: TokenPublicKey) {
            switch publicKey {
            case .ec(let jwk):
                kty = jwk.kty
                (crv, x, y) = (jwk.crv, jwk.x, jwk.y)
            case .rsa(let jwk):
                kty = jwk.kty
                (n, e) = (jwk.n, jwk.e)
            }
            kid = id
            alg = publicKey.algorithm.rawValue
        }
    }

    let keys: [Key]

    init(_ set: TokenSigningKeySet) {
        keys = set.published.map(Key.init)
    }

    /// Every key the tenant has had, retired ones included (`<issuer>/jwks/archive`).
    init(archive: [StoredTokenSigningKey]) {
        keys = archive.map { Key(id: $0.id, publicKey: $0.publicKey) }
    }
}
