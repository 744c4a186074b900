import CountersignCore
import Foundation

/// A tenant's published token-signing keys as a JWK Set (RFC 7517 §5), served at
/// `<issuer>/jwks`: each an ES256 signature key named by its thumbprint.
struct JSONWebKeySet: Encodable, Sendable {
    struct Key: Encodable, Sendable, Equatable {
        let kty: String
        let crv: String
        let x: String
        let y: String
        let kid: String
        let use = "sig"
        let alg = "ES256"

        init(_ key: TokenSigningKey) {
            kty = key.publicKey.kty
            crv = key.publicKey.crv
            x = key.publicKey.x
            y = key.publicKey.y
            kid = key.id
        }
    }

    let keys: [Key]

    init(_ set: TokenSigningKeySet) {
        keys = set.published.map(Key.init)
    }
}
