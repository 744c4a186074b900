import CountersignCBOR
import Crypto
#if canImport(CryptoKit)
// CryptoKit does not declare its types Sendable in the iOS 17 and 18 SDKs (docs/sdk.md).
@preconcurrency import CryptoKit
#endif
import _CryptoExtras
import Foundation

/// The COSE algorithms (IANA "COSE Algorithms") Countersign verifies in WebAuthn. Credentials
/// use ES256, EdDSA (Ed25519) and RS256 by default; ES384, ES512 and PS256 are accepted from
/// authenticators that prefer them; RS1 only ever signs TPM attestation statements.
public enum COSEAlgorithm: Int64, Sendable, CaseIterable, Codable {
    case es256 = -7
    case edDSA = -8
    case es384 = -35
    case es512 = -36
    case ps256 = -37
    case rs256 = -257
    case rs1 = -65535

    public var name: String {
        switch self {
        case .es256: "ES256"
        case .edDSA: "EdDSA"
        case .es384: "ES384"
        case .es512: "ES512"
        case .ps256: "PS256"
        case .rs256: "RS256"
        case .rs1: "RS1"
        }
    }
}

/// A credential public key as a COSE_Key (RFC 9052 §7, WebAuthn Level 3 §6.5.1.1): an EC2 key
/// on P-256, P-384 or P-521, an OKP Ed25519 key, or an RSA key, each with the algorithm it is
/// used with. Parsing checks the key type against the algorithm, the curve, the coordinate
/// lengths and that the point is on the curve, by building the key once.
public struct COSEKey: Sendable, Equatable {
    public enum Material: Sendable, Equatable {
        case ec2(curve: Int64, x: [UInt8], y: [UInt8])
        case okp(curve: Int64, x: [UInt8])
        case rsa(n: [UInt8], e: [UInt8])
    }

    public let algorithm: COSEAlgorithm
    public let material: Material

    static let keyTypeLabel: Int64 = 1
    static let algorithmLabel: Int64 = 3
    static let okp: Int64 = 1, ec2: Int64 = 2, rsa: Int64 = 3
    static let p256: Int64 = 1, p384: Int64 = 2, p521: Int64 = 3, ed25519: Int64 = 6

    public init(algorithm: COSEAlgorithm, material: Material) throws(WebAuthnFormatError) {
        self.algorithm = algorithm
        self.material = material
        _ = try verifier()
    }

    /// An ES256 key from a P-256 public key (what the SDK's platform authenticator creates).
    public init(p256 key: P256.Signing.PublicKey) {
        let point = Array(key.x963Representation)
        algorithm = .es256
        material = .ec2(curve: Self.p256, x: Array(point[1...32]), y: Array(point[33...64]))
    }

    /// Reads a COSE_Key map. Unknown labels are ignored (RFC 9052 allows them); the key type,
    /// algorithm and the members the key type needs are required.
    public init(_ value: CBORValue) throws(WebAuthnFormatError) {
        guard let map = value.map else { throw .publicKey("not a CBOR map") }
        guard let keyType = map[int: Self.keyTypeLabel]?.int else { throw .publicKey("kty (1) is missing or not an integer") }
        guard let alg = map[int: Self.algorithmLabel]?.int else { throw .publicKey("alg (3) is missing or not an integer") }
        guard let algorithm = COSEAlgorithm(rawValue: alg), algorithm != .rs1 else { throw .unsupportedAlgorithm(alg) }
        func bytes(_ label: Int64, _ name: String) throws(WebAuthnFormatError) -> [UInt8] {
            guard let bytes = map[int: label]?.bytes else { throw .publicKey("\(name) (\(label)) is missing or not a byte string") }
            return bytes
        }
        let material: Material
        switch (keyType, algorithm) {
        case (Self.ec2, .es256), (Self.ec2, .es384), (Self.ec2, .es512):
            guard let curve = map[int: -1]?.int else { throw .publicKey("crv (-1) is missing or not an integer") }
            material = .ec2(curve: curve, x: try bytes(-2, "x"), y: try bytes(-3, "y"))
        case (Self.okp, .edDSA):
            guard let curve = map[int: -1]?.int else { throw .publicKey("crv (-1) is missing or not an integer") }
            material = .okp(curve: curve, x: try bytes(-2, "x"))
        case (Self.rsa, .rs256), (Self.rsa, .ps256):
            material = .rsa(n: try bytes(-1, "n"), e: try bytes(-2, "e"))
        default:
            throw .publicKey("key type \(keyType) does not fit algorithm \(algorithm.name)")
        }
        try self.init(algorithm: algorithm, material: material)
    }

    /// The COSE_Key map, with only the members Countersign reads.
    public var cbor: CBORValue {
        switch material {
        case .ec2(let curve, let x, let y):
            .map(CBORMap([
                .init(key: .init(1), value: .init(Self.ec2)), .init(key: .init(3), value: .init(algorithm.rawValue)),
                .init(key: .init(-1), value: .init(curve)), .init(key: .init(-2), value: .bytes(x)),
                .init(key: .init(-3), value: .bytes(y)),
            ]))
        case .okp(let curve, let x):
            .map(CBORMap([
                .init(key: .init(1), value: .init(Self.okp)), .init(key: .init(3), value: .init(algorithm.rawValue)),
                .init(key: .init(-1), value: .init(curve)), .init(key: .init(-2), value: .bytes(x)),
            ]))
        case .rsa(let n, let e):
            .map(CBORMap([
                .init(key: .init(1), value: .init(Self.rsa)), .init(key: .init(3), value: .init(algorithm.rawValue)),
                .init(key: .init(-1), value: .bytes(n)), .init(key: .init(-2), value: .bytes(e)),
            ]))
        }
    }

    /// The key in CTAP2 canonical CBOR, as it appears in attested credential data.
    public var encoded: [UInt8] { CBOREncoder.encode(cbor) }

    /// Whether `signature` is this key's signature over `data`: ASN.1 DER ECDSA for EC2 keys
    /// (WebAuthn §6.5.5; a raw r‖s signature fails), the 64 raw bytes for Ed25519, and
    /// PKCS #1 v1.5 or PSS for RSA.
    public func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        guard let verifier = try? verifier() else { return false }
        return verifier.isValid(signature, for: data, algorithm: algorithm)
    }

    /// The key as a signature verifier of the same algorithm, to compare with a certificate's
    /// key or check attestation signatures.
    public func verifier() throws(WebAuthnFormatError) -> SignatureVerifier {
        do {
            switch (material, algorithm) {
            case (.ec2(Self.p256, let x, let y), .es256) where x.count == 32 && y.count == 32:
                return .p256(try P256.Signing.PublicKey(x963Representation: [0x04] + x + y))
            case (.ec2(Self.p384, let x, let y), .es384) where x.count == 48 && y.count == 48:
                return .p384(try P384.Signing.PublicKey(x963Representation: [0x04] + x + y))
            case (.ec2(Self.p521, let x, let y), .es512) where x.count == 66 && y.count == 66:
                return .p521(try P521.Signing.PublicKey(x963Representation: [0x04] + x + y))
            case (.okp(Self.ed25519, let x), .edDSA) where x.count == 32:
                return .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: x))
            case (.rsa(let n, let e), .rs256), (.rsa(let n, let e), .ps256):
                return .rsa(try _RSA.Signing.PublicKey(n: n, e: e))
            case (.ec2, _), (.okp, _):
                throw WebAuthnFormatError.publicKey("curve or coordinate lengths do not fit \(algorithm.name)")
            default:
                throw WebAuthnFormatError.publicKey("key type does not fit \(algorithm.name)")
            }
        } catch let error as WebAuthnFormatError {
            throw error
        } catch {
            throw .publicKey("not a valid \(algorithm.name) public key")
        }
    }
}

/// A public key ready to check signatures, whichever algorithm it belongs to. Attestation
/// statements name their algorithm separately from the key (a packed or TPM statement may be
/// signed with RS1 or ES384 by a certificate key), so the algorithm is passed per check.
public enum SignatureVerifier: Sendable {
    case p256(P256.Signing.PublicKey)
    case p384(P384.Signing.PublicKey)
    case p521(P521.Signing.PublicKey)
    case ed25519(Curve25519.Signing.PublicKey)
    case rsa(_RSA.Signing.PublicKey)

    /// The key of a certificate's SubjectPublicKeyInfo (DER), for attestation certificates.
    public init?(subjectPublicKeyInfo der: [UInt8]) {
        if let key = try? P256.Signing.PublicKey(derRepresentation: der) { self = .p256(key) }
        else if let key = try? P384.Signing.PublicKey(derRepresentation: der) { self = .p384(key) }
        else if let key = try? P521.Signing.PublicKey(derRepresentation: der) { self = .p521(key) }
        else if let key = try? Curve25519.Signing.PublicKey(derRepresentation: der) { self = .ed25519(key) }
        else if let key = try? _RSA.Signing.PublicKey(unsafeDERRepresentation: der) { self = .rsa(key) }
        else { return nil }
    }

    public func isValid(_ signature: [UInt8], for data: [UInt8], algorithm: COSEAlgorithm) -> Bool {
        switch (self, algorithm) {
        case (.p256(let key), .es256):
            guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: SHA256.hash(data: data))
        case (.p384(let key), .es384):
            guard let signature = try? P384.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: SHA384.hash(data: data))
        case (.p521(let key), .es512):
            guard let signature = try? P521.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: SHA512.hash(data: data))
        case (.ed25519(let key), .edDSA):
            return key.isValidSignature(signature, for: data)
        case (.rsa(let key), .rs256):
            return key.isValidSignature(.init(rawRepresentation: signature), for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
        case (.rsa(let key), .ps256):
            return key.isValidSignature(.init(rawRepresentation: signature), for: SHA256.hash(data: data), padding: .PSS)
        case (.rsa(let key), .rs1):
            return key.isValidSignature(
                .init(rawRepresentation: signature), for: Insecure.SHA1.hash(data: data), padding: .insecurePKCS1v1_5)
        default:
            return false
        }
    }

    /// Whether two verifiers hold the same public key (a credential key against the key of its
    /// attestation certificate or TPM public area).
    public func sameKey(as other: SignatureVerifier) -> Bool {
        switch (self, other) {
        case (.p256(let a), .p256(let b)): a.x963Representation == b.x963Representation
        case (.p384(let a), .p384(let b)): a.x963Representation == b.x963Representation
        case (.p521(let a), .p521(let b)): a.x963Representation == b.x963Representation
        case (.ed25519(let a), .ed25519(let b)): a.rawRepresentation == b.rawRepresentation
        case (.rsa(let a), .rsa(let b)): a.derRepresentation == b.derRepresentation
        default: false
        }
    }
}
