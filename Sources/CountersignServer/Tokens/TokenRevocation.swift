import Foundation

/// `POST /revoke` (RFC 7009), client-authenticated like the token endpoint, form parameter
/// `token`:
///
/// - a refresh token of the calling client: its whole family is revoked, with the access tokens
///   issued beside it (RFC 7009 §2.1: the tokens of the same grant).
/// - an unexpired access token issued to the calling client: recorded as revoked until it
///   expires, so that introspection and UserInfo refuse it. A resource server that checks the
///   JWT itself cannot know; it must introspect to honour revocations.
/// - anything else (unknown, expired, another client's, an ID token): nothing happens, and the
///   answer is the same 200, so that the endpoint tells no one what it holds (RFC 7009 §2.2).
///
/// No token type is refused, so `unsupported_token_type` is never answered.
struct TokenRevocation: Sendable {
    let database: any Database
    let audit: AuditLog
    let signingKeys: TokenSigningKeys
    let now: @Sendable () -> Date
    let housekeeping: TokenHousekeeping
    var refreshTokens: any RefreshTokenRepository = SQLRefreshTokenRepository()
    var revokedAccessTokens: any RevokedAccessTokenRepository = SQLRevokedAccessTokenRepository()

    /// The empty JSON object every successful revocation answers.
    struct Answer: Encodable, Sendable {}

    func revoke(_ form: FormParameters, client: Client, issuer: Issuer) async throws -> Answer {
        let presented = try PresentedToken(form)
        let now = now()
        try await housekeeping.runIfDue(at: now)
        switch presented {
        case .opaque(let value):
            guard let found = try await refreshTokens.find(tokenHash: Secrets.hash(value), on: database),
                  found.family.clientID == client.id, found.family.tenantID == client.tenantID else { return Answer() }
            try await RefreshTokenFamilyRevocation(database: database, audit: audit, refreshTokens: refreshTokens)
                .revoke(found.family, cause: .revocationRequest, client: client, at: now)
        case .jws(let value):
            let keys = try await signingKeys.keySet(for: issuer.tenant)
            guard let token = try? await AccessTokenVerifier.verify(value, keys: keys, issuer: issuer.identifier, at: now),
                  token.clientID == client.id else { return Answer() }
            try await database.transaction { executor in
                guard try await revokedAccessTokens.revoke(
                    jti: token.id, tenantID: issuer.tenant.id,
                    expiresAt: Date(timeIntervalSince1970: TimeInterval(token.expiresAt)), at: now, on: executor) else { return }
                try await audit.record(
                    "access_token.revoked", actor: "client:\(client.id)", tenantID: issuer.tenant.id,
                    target: ("access_token", token.id), details: ["user_id": token.userID], at: now, on: executor)
            }
        }
        return Answer()
    }
}
