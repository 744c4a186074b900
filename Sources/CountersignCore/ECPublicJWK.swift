import Crypto
import Foundation

/// A P-256 public key as a JSON Web Key (RFC 7517/7518: `kty` "EC", `crv` "P-256", `x`, `y`).
///
/// Both device keys — the ES256 signing key and the HPKE key-agreement key — travel in this
/// form. P-256 is used for both so that both can live in a Secure Enclave.
public struct ECPublicJWK: Codable, Sendable, Hashable {
    public var kty: String
    public var crv: String
    public var x: String
    public var y: String

    public init(kty: String = "EC", crv: String = "P-256", x: String, y: String) {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.y = y
    }

    /// The JWK of a signing key.
    public init(_ key: P256.Signing.PublicKey) {
        self.init(x963: key.x963Representation)
    }

    /// The JWK of a key-agreement (HPKE) key.
    public init(_ key: P256.KeyAgreement.PublicKey) {
        self.init(x963: key.x963Representation)
    }

    private init(x963: Data) {
        // x963 is 0x04 ‖ X (32 bytes) ‖ Y (32 bytes).
        self.init(x: Data(x963[1..<33]).base64URLEncodedString, y: Data(x963[33..<65]).base64URLEncodedString)
    }

    /// The uncompressed point, after checking that the members describe a P-256 point.
    private func x963() throws(JWKError) -> Data {
        guard kty == "EC" else { throw .unsupportedKeyType(kty) }
        guard crv == "P-256" else { throw .unsupportedCurve(crv) }
        guard let xBytes = Data(base64URLEncoded: x), xBytes.count == 32,
              let yBytes = Data(base64URLEncoded: y), yBytes.count == 32 else { throw .malformedCoordinates }
        return Data([0x04]) + xBytes + yBytes
    }

    /// The signing key this JWK describes; throws for anything that is not a valid P-256 point.
    public func signingKey() throws(JWKError) -> P256.Signing.PublicKey {
        let point = try x963()
        do { return try P256.Signing.PublicKey(x963Representation: point) } catch { throw .notOnCurve }
    }

    /// The key-agreement key this JWK describes.
    public func agreementKey() throws(JWKError) -> P256.KeyAgreement.PublicKey {
        let point = try x963()
        do { return try P256.KeyAgreement.PublicKey(x963Representation: point) } catch { throw .notOnCurve }
    }

    /// The RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order,
    /// base64url-encoded. Enrollment URIs carry it as the server key's fingerprint.
    public var thumbprint: String {
        let members = JSONValue.object(["crv": .string(crv), "kty": .string(kty), "x": .string(x), "y": .string(y)])
        return Data(SHA256.hash(data: members.canonicalData)).base64URLEncodedString
    }
}

/// Why a JWK was refused.
public enum JWKError: Error, Sendable, Equatable, CustomStringConvertible {
    case unsupportedKeyType(String)
    case unsupportedCurve(String)
    case malformedCoordinates
    case notOnCurve

    public var description: String {
        switch self {
        case .unsupportedKeyType(let kty): "key type \"\(kty)\" is not supported; use \"EC\""
        case .unsupportedCurve(let crv): "curve \"\(crv)\" is not supported; use \"P-256\""
        case .malformedCoordinates: "x and y must each be 32 bytes of base64url"
        case .notOnCurve: "the point is not on the P-256 curve"
        }
    }
}
