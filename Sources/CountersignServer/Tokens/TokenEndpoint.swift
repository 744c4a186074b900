/// `POST /token`: hands the request to the grant its `grant_type` names: the CIBA grant
/// (`CIBAGrant`), the authorization code (`AuthorizationCodeGrant`) or a refresh
/// (`RefreshTokenGrant`). A public client may use only the code and its refresh tokens.
struct TokenEndpoint: Sendable {
    let ciba: CIBAGrant
    let code: AuthorizationCodeGrant
    let refresh: RefreshTokenGrant

    func exchange(_ form: FormParameters, client: Client, issuer: Issuer) async throws -> TokenResponse {
        guard let grantType = form["grant_type"] else { throw TokenRequestError.missingGrantType }
        switch grantType {
        case ProviderMetadata.cibaGrantType:
            guard !client.isPublic else { throw TokenRequestError.publicClient(grantType) }
            return try await ciba.exchange(form, client: client, issuer: issuer)
        case AuthorizationCodeGrant.grantType: return try await code.exchange(form, client: client, issuer: issuer)
        case RefreshTokenGrant.grantType: return try await refresh.exchange(form, client: client, issuer: issuer)
        default: throw TokenRequestError.unsupportedGrantType
        }
    }
}
