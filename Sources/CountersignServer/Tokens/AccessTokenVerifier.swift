import CountersignCore
import Foundation

/// An access token this tenant issued, checked, with the claims introspection and UserInfo read.
struct VerifiedAccessToken: Sendable, Equatable {
    /// The `jti`.
    let id: String
    let issuer: String
    let clientID: String
    let userID: String
    let audience: String
    let scope: [String]
    let issuedAt: Int64
    let expiresAt: Int64
    let authTime: Int64?
    let acr: String?
    let amr: [String]?
    /// RFC 9396 §9.1: what the user approved, as the token states it.
    var authorizationDetails: JSONValue? = nil
}

/// Why an access token is not honoured. The reasons are told to the token's holder only in
/// words that say nothing it could not see in the token itself.
enum AccessTokenRejection: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed
    case notAnAccessToken
    case unknownKey
    case wrongIssuer
    case expired
    case revoked
    case userUnavailable

    var description: String {
        switch self {
        case .malformed: "the access token is not an ES256 or RS256 JWT with the claims of an access token"
        case .notAnAccessToken: "the token is not an access token"
        case .unknownKey: "the access token is not signed by a key of this issuer"
        case .wrongIssuer: "the access token was issued by another issuer"
        case .expired: "the access token has expired"
        case .revoked: "the access token was revoked"
        case .userUnavailable: "the user was disabled or removed"
        }
    }
}

/// Checks an access token as a resource server of this tenant would, and then what only the
/// server knows: the JWS signature (ES256 or RS256, as the token's client registered) with a
/// key of the tenant's JWKS of that algorithm (so another tenant's token fails here), `typ`
/// `at+jwt` (so an ID token is no access token), `iss`, `exp`, that it was not revoked, and that
/// its user is still active.
struct AccessTokenVerifier: Sendable {
    let services: ServerServices
    var revokedAccessTokens: any RevokedAccessTokenRepository = SQLRevokedAccessTokenRepository()

    /// The token and its user, if the token is valid now.
    func validate(_ token: String, issuer: Issuer) async throws -> (token: VerifiedAccessToken, user: User) {
        let keys = try await services.tokenSigningKeys.keySet(for: issuer.tenant)
        let verified = try Self.verify(token, keys: keys, issuer: issuer.identifier, at: services.now())
        guard !(try await revokedAccessTokens.isRevoked(jti: verified.id, tenantID: issuer.tenant.id, on: services.database)) else {
            throw AccessTokenRejection.revoked
        }
        guard let user = try await services.repositories.users.find(
            id: verified.userID, tenantID: issuer.tenant.id, on: services.database), user.status == .active else {
            throw AccessTokenRejection.userUnavailable
        }
        return (verified, user)
    }

    /// What the token proves by itself: signature, type, issuer and expiry.
    static func verify(_ token: String, keys: TokenSigningKeySet, issuer: String,
                       at date: Date) throws(AccessTokenRejection) -> VerifiedAccessToken {
        guard let jwt = TenantSignedJWT(parsing: token) else { throw .malformed }
        guard jwt.type?.lowercased() == TokenIssuer.accessTokenType else { throw .notAnAccessToken }
        guard jwt.isSigned(by: keys) else { throw .unknownKey }
        guard let claims = jwt.claims,
              let tokenIssuer = claims["iss"]?.stringValue, let id = claims["jti"]?.stringValue,
              let clientID = claims["client_id"]?.stringValue, let userID = claims["sub"]?.stringValue,
              let audience = claims["aud"]?.stringValue, let scope = claims["scope"]?.stringValue,
              case .integer(let issuedAt) = claims["iat"], case .integer(let expiresAt) = claims["exp"] else {
            throw .malformed
        }
        guard tokenIssuer == issuer else { throw .wrongIssuer }
        guard date.timeIntervalSince1970 < TimeInterval(expiresAt) else { throw .expired }
        let authTime: Int64? = if case .integer(let value) = claims["auth_time"] { value } else { nil }
        let amr: [String]? = if case .array(let values) = claims["amr"] { values.compactMap(\.stringValue) } else { nil }
        return VerifiedAccessToken(
            id: id, issuer: tokenIssuer, clientID: clientID, userID: userID, audience: audience,
            scope: scope.split(separator: " ").map(String.init), issuedAt: issuedAt, expiresAt: expiresAt,
            authTime: authTime, acr: claims["acr"]?.stringValue, amr: amr,
            authorizationDetails: claims[AuthorizationDetails.claim])
    }
}
