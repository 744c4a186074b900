/// Why the token endpoint (or the receipt endpoint) gave no tokens; each case is one error of
/// RFC 6749 §5.2 or CIBA §11. All are 400: at the token endpoint even `access_denied` is
/// (CIBA §11), unlike at `bc-authorize`.
enum TokenRequestError: OAuthFailure, Equatable {
    case missingGrantType
    case unsupportedGrantType
    case pushClient
    /// A public client asked for a grant that needs a client that authenticates.
    case publicClient(String)
    case missingAuthReqID
    case unknownAuthReqID
    case pending
    case slowDown(interval: Int)
    case expired
    case denied
    case alreadyExchanged
    case userUnavailable
    case missingRefreshToken
    case unknownRefreshToken
    case refreshTokenRevoked
    case refreshTokenReused
    case refreshTokenExpired
    case offlineAccessWithdrawn
    case malformedScope
    case scopeNotGranted(String)
    case scopeNotAllowed(String)

    var oauthError: OAuthError {
        switch self {
        case .missingGrantType:
            OAuthError(.invalidRequest, "grant_type is required")
        case .unsupportedGrantType:
            OAuthError(.unsupportedGrantType,
                       "grant_type must be \(AuthorizationCodeGrant.grantType), \(ProviderMetadata.cibaGrantType) or \(RefreshTokenGrant.grantType)")
        case .publicClient(let grantType):
            OAuthError(.unauthorizedClient, "a public client may not use \(grantType); it has no credentials to authenticate with")
        case .pushClient:
            OAuthError(.unauthorizedClient, "the client is registered for push mode and receives its tokens there")
        case .missingAuthReqID:
            OAuthError(.invalidRequest, "auth_req_id is required")
        case .unknownAuthReqID:
            OAuthError(.invalidGrant, "auth_req_id is unknown or was issued to another client")
        case .pending:
            OAuthError(.authorizationPending, "the user has not decided yet")
        case .slowDown(let interval):
            OAuthError(.slowDown, "poll at most every \(interval) seconds")
        case .expired:
            OAuthError(.expiredToken, "auth_req_id has expired")
        case .denied:
            OAuthError(.accessDenied, "the user denied the request", status: .badRequest)
        case .alreadyExchanged:
            OAuthError(.invalidGrant, "auth_req_id was already exchanged for tokens")
        case .userUnavailable:
            OAuthError(.invalidGrant, "the user was disabled or removed after approving")
        case .missingRefreshToken:
            OAuthError(.invalidRequest, "refresh_token is required")
        case .unknownRefreshToken:
            OAuthError(.invalidGrant, "refresh_token is unknown or was issued to another client")
        case .refreshTokenRevoked:
            OAuthError(.invalidGrant, "refresh_token was revoked")
        case .refreshTokenReused:
            OAuthError(.invalidGrant, "refresh_token was already used; every refresh token of its grant is now revoked")
        case .refreshTokenExpired:
            OAuthError(.invalidGrant, "refresh_token has expired")
        case .offlineAccessWithdrawn:
            OAuthError(.invalidGrant, "the client is no longer allowed \(RefreshTokenFamily.offlineAccessScope)")
        case .malformedScope:
            OAuthError(.invalidScope, "scope must be space-separated scope tokens")
        case .scopeNotGranted(let value):
            OAuthError(.invalidScope, "scope \(value) was not granted with this refresh token")
        case .scopeNotAllowed(let value):
            OAuthError(.invalidScope, "the client may not request scope \(value)")
        }
    }
}
