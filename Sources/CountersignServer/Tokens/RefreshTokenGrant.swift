import Foundation

/// The token endpoint with `grant_type=refresh_token` (RFC 6749 §6): a refresh token is used
/// once. Each use marks it used and hands out the next token of its family, with a new access
/// token and, when the scope holds `openid`, a new ID token stating the original approval's
/// `auth_time`, `acr` and `amr`.
///
/// - unknown, another client's: `invalid_grant`, like an unknown `auth_req_id`.
/// - revoked, expired (`RefreshTokenFamily` lifetimes), the user disabled or deleted, the
///   client no longer allowed `offline_access`: `invalid_grant`.
/// - used already: the whole family is revoked (`RefreshTokenFamilyRevocation`), then
///   `invalid_grant`. Of two requests racing with one token, the second counts as such a reuse:
///   the token is marked used only if it still is not, in the transaction that stores the next.
/// - `scope` wider than the grant's: `invalid_scope`; the token stays usable.
/// - `authorization_details` other than elements of the grant's: `invalid_authorization_details`
///   (RFC 9396 §6.2); the token stays usable. A subset is granted as that subset.
struct RefreshTokenGrant: Sendable {
    static let grantType = "refresh_token"

    let store: any RefreshTokenStore
    let now: @Sendable () -> Date
    let tokens: TokenIssuer
    let housekeeping: TokenHousekeeping

    /// How a rotation ended (`RefreshTokenStore.rotate`): the next token stored, the family
    /// found revoked, or the token found used and the family revoked for it.
    enum Outcome: Sendable, Equatable {
        case rotated, revoked, reused
    }

    func exchange(_ form: FormParameters, client: Client, issuer: Issuer) async throws -> TokenResponse {
        guard let value = form["refresh_token"] else { throw TokenRequestError.missingRefreshToken }
        let now = now()
        try await housekeeping.runIfDue(at: now)
        guard let found = try await store.refreshToken(hash: Secrets.hash(value)),
              found.family.clientID == client.id, found.family.tenantID == client.tenantID else {
            throw TokenRequestError.unknownRefreshToken
        }
        let (token, family) = found
        let revocation = RefreshTokenFamilyRevocation(store: store)
        guard family.revokedAt == nil, token.revokedAt == nil else { throw TokenRequestError.refreshTokenRevoked }
        guard token.usedAt == nil else {
            try await revocation.revoke(family, cause: .reuse, client: client, at: now)
            throw TokenRequestError.refreshTokenReused
        }
        guard !token.isExpired(at: now, in: family) else { throw TokenRequestError.refreshTokenExpired }
        guard client.scopes.contains(RefreshTokenFamily.offlineAccessScope) else {
            throw TokenRequestError.offlineAccessWithdrawn
        }
        let scope = try RefreshScope(form["scope"], granted: family.scope, allowedFor: client)
        let details = try RefreshAuthorizationDetails(form[AuthorizationDetails.claim], granted: family.authorizationDetails)
        guard let user = try await store.user(id: family.userID, tenantID: family.tenantID), user.status == .active else {
            throw TokenRequestError.userUnavailable
        }
        let issued = try await tokens.sign(
            TokenGrant(of: family, scope: scope.values, authorizationDetails: details.details),
            with: client.idTokenSignedResponseAlg, issuer: issuer, at: now, refresh: NewRefreshToken(in: family, startsFamily: false))
        switch try await store.rotate(token, of: family, to: issued, byClient: client.id, at: now) {
        case .rotated: return issued.response
        case .revoked: throw TokenRequestError.refreshTokenRevoked
        case .reused: throw TokenRequestError.refreshTokenReused
        }
    }
}
