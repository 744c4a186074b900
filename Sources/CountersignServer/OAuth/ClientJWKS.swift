import CountersignCore
import Foundation
import JWTKit

/// The algorithms a client may sign its JWTs with. Each kind of key signs with exactly one of
/// them, so a key never verifies a signature made with an algorithm its owner did not choose
/// (the RS256-key-as-HMAC-secret confusion of RFC 8725 §2.1 cannot happen).
enum ClientJWSAlgorithm: String, Sendable, CaseIterable, Codable {
    case es256 = "ES256"
    case rs256 = "RS256"
}

/// The public keys a client registered inline (`jwks`, OpenID Connect Dynamic Client
/// Registration §2): they check its client assertions (`private_key_jwt`), its signed
/// authentication requests and its login hint tokens.
///
/// Checked once, when the administrator uploads them, so that a mistake is a precise 400 then
/// rather than a puzzling 401 later: EC keys on P-256 (ES256) and RSA keys of 2048 to 8192 bits
/// (RS256), each named by a `kid` unique in the set, at most ten. A key carrying private
/// members is refused outright: whoever pasted it has exposed it and must make a new pair.
/// Only the members that describe the public key are kept.
///
/// ```swift
/// let jwks = try ClientJWKS(validating: try JSONValue(parsing: uploaded))
/// let key = jwks.key(id: "2026-03", algorithm: .es256)
/// ```
struct ClientJWKS: Sendable, Equatable, Codable {
    static let maximumKeys = 10
    static let maximumKeyIDLength = 128

    let keys: [ClientJWK]

    init(validating value: JSONValue) throws(ClientJWKSError) {
        guard case .array(let members)? = value["keys"] else { throw .notAKeySet }
        guard (1...Self.maximumKeys).contains(members.count) else { throw .keyCount }
        var keys: [ClientJWK] = []
        for (index, member) in members.enumerated() {
            let key = try ClientJWK(validating: member, position: index + 1)
            guard !keys.contains(where: { $0.kid == key.kid }) else { throw .duplicateKeyID(key.kid) }
            keys.append(key)
        }
        self.keys = keys
    }

    /// The key a JWT names. Without a `kid` the client must have exactly one key for the
    /// algorithm: a verifier never tries keys in turn.
    func key(id: String?, algorithm: ClientJWSAlgorithm) -> ClientJWK? {
        let candidates = keys.filter { $0.algorithm == algorithm }
        guard let id else { return candidates.count == 1 ? candidates[0] : nil }
        return candidates.first { $0.kid == id }
    }

    init(from decoder: any Decoder) throws {
        try self.init(validating: try JSONValue(from: decoder))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(["keys": keys])
    }

    /// The stored form: canonical JSON of the public members.
    var canonicalJSON: String {
        JSONValue.object(["keys": .array(keys.map(\.jsonValue))]).canonicalString
    }
}

/// One registered public key, reduced to the members that describe it.
struct ClientJWK: Sendable, Equatable, Codable {
    let kty: String
    let kid: String
    let alg: String
    var crv: String? = nil
    var x: String? = nil
    var y: String? = nil
    var n: String? = nil
    var e: String? = nil

    /// Members that only a private key has (RFC 7518 §6.2.2, §6.3.2; `k` of symmetric keys).
    static let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    var algorithm: ClientJWSAlgorithm { kty == "EC" ? .es256 : .rs256 }

    var jsonValue: JSONValue {
        let members: [String: String?] = ["kty": kty, "kid": kid, "alg": alg, "crv": crv, "x": x, "y": y, "n": n, "e": e]
        return .object(members.compactMapValues { $0.map(JSONValue.string) })
    }

    init(validating value: JSONValue, position: Int) throws(ClientJWKSError) {
        guard case .object(let members) = value else { throw .notAKey(position) }
        guard let kid = members["kid"]?.stringValue, !kid.isEmpty else { throw .missingKeyID(position) }
        guard kid.count <= ClientJWKS.maximumKeyIDLength, kid.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }) else {
            throw .malformedKeyID(position)
        }
        if let found = Self.privateMembers.first(where: { members[$0] != nil }) { throw .privateKey(kid, member: found) }
        if let use = members["use"], use != .string("sig") { throw .wrongUse(kid) }
        let kty = members["kty"]?.stringValue ?? ""
        let expectedAlgorithm: ClientJWSAlgorithm
        switch kty {
        case "EC": expectedAlgorithm = .es256
        case "RSA": expectedAlgorithm = .rs256
        default: throw .unsupportedKeyType(kid)
        }
        if let alg = members["alg"], alg != .string(expectedAlgorithm.rawValue) { throw .wrongAlgorithm(kid, expected: expectedAlgorithm) }
        self.kty = kty
        self.kid = kid
        self.alg = expectedAlgorithm.rawValue
        if kty == "EC" {
            guard let crv = members["crv"]?.stringValue, crv == "P-256" else { throw .unsupportedCurve(kid) }
            let point = ECPublicJWK(crv: crv, x: members["x"]?.stringValue ?? "", y: members["y"]?.stringValue ?? "")
            do {
                _ = try point.signingKey()
            } catch .notOnCurve {
                throw .notOnCurve(kid)
            } catch {
                throw .malformedCoordinates(kid)
            }
            (self.crv, self.x, self.y) = (point.crv, point.x, point.y)
        } else {
            guard let modulus = members["n"]?.stringValue.flatMap({ Data(base64URLEncoded: $0) }),
                  let exponent = members["e"]?.stringValue.flatMap({ Data(base64URLEncoded: $0) }) else {
                throw .malformedRSA(kid)
            }
            let bits = Self.bitLength(modulus)
            guard (2048...8192).contains(bits) else { throw .rsaKeySize(kid, bits: bits) }
            guard exponent.count <= 8, exponent.last.map({ $0 & 1 == 1 }) == true, Self.bitLength(exponent) > 1 else {
                throw .malformedRSA(kid)
            }
            guard let n = members["n"]?.stringValue, let e = members["e"]?.stringValue,
                  (try? JWTKit.Insecure.RSA.PublicKey(modulus: n, exponent: e)) != nil else { throw .malformedRSA(kid) }
            (self.n, self.e) = (n, e)
        }
    }

    /// The key as jwt-kit verifies with it: ES256 signatures as the 64-byte `r ‖ s` of JWS
    /// (RFC 7518 §3.4), RS256 as RSASSA-PKCS1-v1_5 with SHA-256 (§3.3).
    var jwk: JWK {
        switch algorithm {
        case .es256: .ecdsa(.es256, identifier: JWKIdentifier(string: kid), x: x, y: y, curve: .p256)
        case .rs256: .rsa(.rs256, identifier: JWKIdentifier(string: kid), modulus: n, exponent: e)
        }
    }

    /// The bit length of a big-endian unsigned integer.
    private static func bitLength(_ bytes: Data) -> Int {
        guard let first = bytes.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (bytes.endIndex - first - 1) * 8 + (8 - bytes[first].leadingZeroBitCount)
    }
}

/// Why an uploaded `jwks` was refused; each is a 400 naming the key at fault.
enum ClientJWKSError: Error, Sendable, Equatable, CustomStringConvertible {
    case notAKeySet
    case keyCount
    case notAKey(Int)
    case missingKeyID(Int)
    case malformedKeyID(Int)
    case duplicateKeyID(String)
    case privateKey(String, member: String)
    case wrongUse(String)
    case unsupportedKeyType(String)
    case wrongAlgorithm(String, expected: ClientJWSAlgorithm)
    case unsupportedCurve(String)
    case malformedCoordinates(String)
    case notOnCurve(String)
    case malformedRSA(String)
    case rsaKeySize(String, bits: Int)

    var description: String {
        switch self {
        case .notAKeySet: "must be a JSON Web Key Set: an object with a keys array"
        case .keyCount: "must hold 1 to \(ClientJWKS.maximumKeys) keys"
        case .notAKey(let position): "key \(position) is not a JSON object"
        case .missingKeyID(let position): "key \(position) has no kid"
        case .malformedKeyID(let position):
            "key \(position): kid must be 1 to \(ClientJWKS.maximumKeyIDLength) printable ASCII characters"
        case .duplicateKeyID(let kid): "kid \(kid) names two keys"
        case .privateKey(let kid, let member):
            "key \(kid) holds the private member \(member); register only the public key, and replace this key pair: it is exposed"
        case .wrongUse(let kid): "key \(kid): use must be sig"
        case .unsupportedKeyType(let kid): "key \(kid): kty must be EC (P-256, ES256) or RSA (RS256)"
        case .wrongAlgorithm(let kid, let expected): "key \(kid): alg must be \(expected.rawValue) for this kind of key"
        case .unsupportedCurve(let kid): "key \(kid): crv must be P-256"
        case .malformedCoordinates(let kid): "key \(kid): x and y must each be 32 bytes of base64url"
        case .notOnCurve(let kid): "key \(kid): the point is not on the P-256 curve"
        case .malformedRSA(let kid): "key \(kid): n and e must be the base64url modulus and an odd public exponent"
        case .rsaKeySize(let kid, let bits): "key \(kid): RSA keys must have 2048 to 8192 bits, not \(bits)"
        }
    }
}
