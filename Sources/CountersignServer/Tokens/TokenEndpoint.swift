/// `POST /token`: hands the request to the grant its `grant_type` names, the CIBA grant
/// (`CIBAGrant`) or a refresh (`RefreshTokenGrant`).
struct TokenEndpoint: Sendable {
    let ciba: CIBAGrant
    let refresh: RefreshTokenGrant


    func exchange(_ form: FormParameters, client: Client, issuer: Issuer) async throws -> TokenResponse {
        guard let grantType = form["grant_type"] else { throw TokenRequestError.missingGrantType }
        switch grantType {
        case ProviderMetadata.cibaGrantType: return try await ciba.exchange(form, client: client, issuer: issuer)
        case RefreshTokenGrant.grantType: return try await refresh.exchange(form, client: client, issuer: issuer)
        default: throw TokenRequestError.unsupportedGrantType
        }
    }
}
