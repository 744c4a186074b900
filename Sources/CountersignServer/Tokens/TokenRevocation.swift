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
    let store: any TokenRevocationStore
    let signingKeys: TokenSigningKeys
    let now: @Sendable () -> Date
    let housekeeping: TokenHousekeeping

    /// The empty JSON object every successful revocation answers.
    struct Answer: Encodable, Sendable {}

    func revoke(_ form: FormParameters, client: Client, issuer: Issuer) async throws -> Answer {
        let presented = try PresentedToken(form)
        let now = now()
        try await housekeeping.runIfDue(at: now)
        switch presented {
        case .opaque(let value):
            guard let found = try await store.refreshToken(hash: Secrets.hash(value)),
                  found.family.clientID == client.id, found.family.tenantID == client.tenantID else { return Answer() }
            try await RefreshTokenFamilyRevocation(store: store)
                .revoke(found.family, cause: .revocationRequest, client: client, at: now)
        case .jws(let value):
            let keys = try await signingKeys.keySet(for: issuer.tenant)
            guard let token = try? await AccessTokenVerifier.verify(value, keys: keys, issuer: issuer.identifier, at: now),
                  token.clientID == client.id else { return Answer() }
            try await store.revokeAccessToken(token, tenantID: issuer.tenant.id, byClient: client.id, at: now)
        }
        return Answer()
    }
}
