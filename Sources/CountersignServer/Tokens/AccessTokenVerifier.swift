import CountersignCore
import Foundation
import JWTKit

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
    let store: any AccessTokenVerifierStore
    let signingKeys: TokenSigningKeys
    let now: @Sendable () -> Date

    /// The token and its user, if the token is valid now.
    func validate(_ token: String, issuer: Issuer) async throws -> (token: VerifiedAccessToken, user: User) {
        let keys = try await signingKeys.keySet(for: issuer.tenant)
        let verified = try await Self.verify(token, keys: keys, issuer: issuer.identifier, at: now())
        guard !(try await store.isRevoked(jti: verified.id, tenantID: issuer.tenant.id)) else {
            throw AccessTokenRejection.revoked
        }
        guard let user = try await store.user(id: verified.userID, tenantID: issuer.tenant.id), user.status == .active else {
            throw AccessTokenRejection.userUnavailable
        }
        return (verified, user)
    }

    /// What the token proves by itself: signature, type, issuer and expiry.
    static func verify(_ token: String, keys: TokenSigningKeySet, issuer: String,
                       at date: Date) async throws(AccessTokenRejection) -> VerifiedAccessToken {
        guard let header = TenantJWTHeader(of: token) else { throw .malformed }
        guard header.type?.lowercased() == TokenIssuer.accessTokenType else { throw .notAnAccessToken }
        let claims: AccessTokenClaims
        do {
            claims = try await keys.verify(token, header: header, as: AccessTokenClaims.self)
        } catch TenantJWTError.notSigned {
            throw .unknownKey
        } catch {
            throw .malformed
        }
        guard claims.iss.value == issuer else { throw .wrongIssuer }
        do { try claims.exp.verifyNotExpired(currentDate: date) } catch { throw .expired }
        return VerifiedAccessToken(
            id: claims.jti.value, issuer: claims.iss.value, clientID: claims.clientID, userID: claims.sub.value,
            audience: claims.aud, scope: claims.scope.split(separator: " ").map(String.init),
            issuedAt: Int64(claims.iat.value.timeIntervalSince1970), expiresAt: Int64(claims.exp.value.timeIntervalSince1970),
            authTime: claims.authTime, acr: claims.acr, amr: claims.amr, authorizationDetails: claims.authorizationDetails)
    }
}

/// The claims of an access token as `TokenIssuer` writes them (RFC 9068 §2.2), read by jwt-kit
/// once the signature has verified; every one but those of the authentication is required.
struct AccessTokenClaims: JWTPayload {
    let iss: IssuerClaim
    let jti: IDClaim
    let clientID: String
    let sub: SubjectClaim
    /// Always the one client the token was issued to.
    let aud: String
    let scope: String
    let iat: IssuedAtClaim
    let exp: ExpirationClaim
    let authTime: Int64?
    let acr: String?
    let amr: [String]?
    let authorizationDetails: JSONValue?

    enum CodingKeys: String, CodingKey {
        case iss, jti, sub, aud, scope, iat, exp, acr, amr
        case clientID = "client_id"
        case authTime = "auth_time"
        case authorizationDetails = "authorization_details"
    }

    /// Expiry is checked against the server's clock, after the issuer (`AccessTokenVerifier`).
    func verify(using _: some JWTAlgorithm) {}
}
