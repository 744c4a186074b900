import CountersignCore
import Foundation
import JWTKit

/// A JWT a client signed (RFC 7519, compact JWS of RFC 7515 §7.1): a client assertion, a
/// signed authentication request or a login hint token. Parsing checks the structure and the
/// algorithm only; `verify(with:)` has jwt-kit check the signature with the registered key the
/// JWT names.
///
/// The header and claims are read by Countersign's strict JSON parser, not by jwt-kit's
/// `JSONDecoder`: a claim set with a fractional number or a member named twice is malformed
/// here, where `JSONDecoder` would take it.
///
/// `alg` must be ES256 or RS256: `none` would let anyone write the JWT, and symmetric
/// algorithms would make the public key a shared secret (RFC 8725 §3.1). A header that marks
/// extensions as critical (`crit`) is refused, since none is understood.
struct ClientSignedJWT: Sendable {
    let algorithm: ClientJWSAlgorithm
    let keyID: String?
    let claims: JWTClaims
    private let serialized: String

    init(parsing text: String) throws(ClientJWTError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Data(base64URLEncoded: parts[0]),
              case .object(let header)? = try? JSONValue(parsing: headerBytes),
              let payload = Data(base64URLEncoded: parts[1]), Data(base64URLEncoded: parts[2]) != nil else {
            throw .malformed
        }
        let alg = header["alg"]?.stringValue ?? "none"
        guard let algorithm = ClientJWSAlgorithm(rawValue: alg) else { throw .algorithmRefused(alg) }
        guard header["crit"] == nil else { throw .malformed }
        if let kid = header["kid"], kid.stringValue == nil { throw .malformed }
        guard case .object(let claims)? = try? JSONValue(parsing: payload) else { throw .malformed }
        // Claims name clients, users and JWT ids that are looked up and stored as text: a NUL
        // in any of them makes the JWT malformed here, before a query could choke on it.
        guard !JSONValue.object(header).holdsNULCharacter, !JSONValue.object(claims).holdsNULCharacter else { throw .malformed }
        self.algorithm = algorithm
        self.keyID = header["kid"]?.stringValue
        self.claims = JWTClaims(claims)
        self.serialized = text
    }

    /// Throws unless one of `keys` (the one `kid` names, for this algorithm) made the signature.
    ///
    /// jwt-kit is handed that one key only: given a set, it would check a JWT without `kid`, or
    /// with an unknown one, with its default key, and with the key's algorithm whatever `alg`
    /// says. `ClientJWKS.key(id:algorithm:)` decides instead, and never tries keys in turn.
    func verify(with keys: ClientJWKS?) async throws(ClientJWTError) {
        guard let key = keys?.key(id: keyID, algorithm: algorithm) else { throw .unknownKey }
        let verifier = JWTKeyCollection()
        do {
            try await verifier.add(jwk: key.jwk)
            _ = try await verifier.verify(serialized, as: JWTClaims.self)
        } catch {
            throw .badSignature
        }
    }
}

/// Why a client's JWT is not one the client signed; each use maps these to its own OAuth error.
enum ClientJWTError: Error, Sendable, Equatable {
    case malformed
    case algorithmRefused(String)
    case unknownKey
    case badSignature
}
