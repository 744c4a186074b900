/// Why the revocation or introspection endpoint refused a request. An invalid token is not
/// among the reasons: revocation answers 200 for it (RFC 7009 §2.2) and introspection
/// `"active": false` (RFC 7662 §2.2).
enum TokenManagementError: OAuthFailure, Equatable {
    case missingToken

    var oauthError: OAuthError {
        switch self {
        case .missingToken: OAuthError(.invalidRequest, "token is required")
        }
    }
}
