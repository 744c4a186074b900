import CountersignCore
import Foundation
import JWTKit

/// The header of a JWT that claims to be one of the tenant's own (an access token or an ID
/// token), read before any signature is checked: a compact JWS, parsed by jwt-kit, signed ES256
/// or RS256 and without critical extensions (`crit`), since none is understood.
struct TenantJWTHeader: Sendable {
    let algorithm: TokenSigningAlgorithm
    let keyID: String?
    /// `typ`: `at+jwt` for access tokens, `JWT` for ID tokens.
    let type: String?

    init?(of token: String) {
        guard let header = try? DefaultJWTParser().parse(Array(token.utf8), as: JWTClaims.self).header,
              let algorithm = header.alg.flatMap(TokenSigningAlgorithm.init(rawValue:)),
              header.fields["crit"] == nil else {
            return nil
        }
        self.algorithm = algorithm
        self.keyID = header.kid
        self.type = header.typ
    }
}

/// Why a JWT is not one of the tenant's, once its header was read.
enum TenantJWTError: Error, Sendable, Equatable {
    /// No published key made the signature: `kid` names none, names one of another algorithm
    /// than `alg`, or the signature does not verify.
    case notSigned
    /// The signature verifies, but the claims are not what the tenant's tokens carry.
    case malformedClaims
}

/// The tenant's JWTs are signed and verified by jwt-kit with the keys of `jwtKeys`. Left to
/// itself, jwt-kit would verify a JWT without `kid`, or with one it does not hold, with its
/// default key, and with the key's algorithm whatever `alg` says; so a JWT is verified only with
/// the published key its `kid` names, and only when that key's algorithm is the header's
/// (RFC 8725 §3.1).
///
/// ```swift
/// let token = try await keys.sign(claims, type: TokenIssuer.accessTokenType, with: keys.current(.rs256))
/// let header = TenantJWTHeader(of: token)!
/// let claims = try await keys.verify(token, header: header, as: AccessTokenClaims.self)
/// ```
extension TokenSigningKeySet {
    /// The compact serialisation of `claims` signed by `key`, one of this set's, with `alg`,
    /// `typ` and `kid`.
    func sign(_ claims: [String: JSONValue], type: String, with key: TokenSigningKey) async throws -> String {
        var header = JWTHeader()
        header.typ = type
        return try await jwtKeys.sign(JWTClaims(claims), kid: JWKIdentifier(string: key.id), header: header)
    }

    /// The claims of `token`, whose header is `header`, once the key its `kid` names has verified
    /// the signature with its own algorithm. Times are the caller's to check, with the server's
    /// clock.
    func verify<Claims: JWTPayload>(_ token: String, header: TenantJWTHeader,
                                    as _: Claims.Type) async throws(TenantJWTError) -> Claims {
        guard let keyID = header.keyID, let key = key(id: keyID), key.algorithm == header.algorithm else { throw .notSigned }
        do {
            return try await jwtKeys.verify(token, as: Claims.self)
        } catch let error as JWTError where error.errorType == .malformedToken {
            // jwt-kit reads the claims only once the signature has verified.
            throw .malformedClaims
        } catch {
            throw .notSigned
        }
    }
}
