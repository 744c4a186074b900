import CountersignCore
import Foundation

/// A JWT a tenant signed (compact JWS, RFC 7515 §7.1): one of its access tokens or ID tokens,
/// signed with ES256 or RS256 by one of its token-signing keys. Parsing checks the structure
/// and the algorithm only; `isSigned(by:)` checks the signature.
///
/// The key is the one `kid` names, and it must be of the algorithm the header states: an RS256
/// header is never checked with an EC key or the other way round (RFC 8725 §3.1). A header that
/// marks extensions as critical (`crit`) is refused, since none is understood.
///
/// ```swift
/// let token = try TenantSignedJWT.sign(claims, type: "at+jwt", key: keys.current(.rs256))
/// let parsed = TenantSignedJWT(parsing: token)
/// parsed?.isSigned(by: keys)  // true
/// ```
struct TenantSignedJWT: Sendable {
    let algorithm: TokenSigningAlgorithm
    let keyID: String?
    /// `typ`: `at+jwt` for access tokens, `JWT` for ID tokens.
    let type: String?
    let payload: Data
    private let signingInput: Data
    private let signature: Data

    /// The compact serialisation of `claims` signed by `key`, with `alg`, `typ` and `kid`.
    static func sign(_ claims: [String: JSONValue], type: String, key: TokenSigningKey) throws -> String {
        let header = JSONValue.object(["alg": .string(key.algorithm.rawValue), "typ": .string(type), "kid": .string(key.id)])
        let input = header.canonicalData.base64URLEncodedString + "." + JSONValue.object(claims).canonicalData.base64URLEncodedString
        let signature = try key.privateKey.signature(for: Data(input.utf8))
        return input + "." + signature.base64URLEncodedString
    }

    init?(parsing text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Data(base64URLEncoded: parts[0]),
              case .object(let header)? = try? JSONValue(parsing: headerBytes),
              let payload = Data(base64URLEncoded: parts[1]), let signature = Data(base64URLEncoded: parts[2]),
              let algorithm = header["alg"]?.stringValue.flatMap(TokenSigningAlgorithm.init(rawValue:)),
              header["crit"] == nil else {
            return nil
        }
        self.algorithm = algorithm
        self.keyID = header["kid"]?.stringValue
        self.type = header["typ"]?.stringValue
        self.payload = payload
        self.signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        self.signature = signature
    }

    /// Whether the key of `keys` that `kid` names made the signature, with its own algorithm.
    func isSigned(by keys: TokenSigningKeySet) -> Bool {
        guard let keyID, let key = keys.key(id: keyID), key.algorithm == algorithm else { return false }
        return key.privateKey.isValidSignature(signature, for: signingInput)
    }

    /// The payload parsed as JSON.
    var claims: JSONValue? { try? JSONValue(parsing: payload) }
}
