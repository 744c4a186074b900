/// Why `bc-authorize` refused a request; each case is one error of CIBA §13.
enum BackchannelAuthenticationError: OAuthFailure, Equatable {
    case deliveryModeUnsupported(Client.DeliveryMode)
    case requestObjectUnsupported
    case userCodeUnsupported
    case parameterUnsupported(String)
    case missingScope
    case malformedScope
    case scopeWithoutOpenID
    case scopeNotAllowed(String)
    case invalidRequestedExpiry
    case invalidBindingMessage(String)
    case malformedAcrValues
    case missingHint
    case severalHints
    case loginHintTokenUnsupported
    case invalidIDTokenHint(String)
    case unknownUser
    case userDisabled
    case noActiveDevice
    case userSuppressed(retryAfter: Int)
    case userRateLimited(perMinute: Int, retryAfter: Int)

    var oauthError: OAuthError {
        switch self {
        case .deliveryModeUnsupported(let mode):
            OAuthError(.unauthorizedClient, "the \(mode.rawValue) token delivery mode is not supported yet; register the client for poll")
        case .requestObjectUnsupported:
            OAuthError(.invalidRequest, "signed authentication requests (request) are not supported")
        case .userCodeUnsupported:
            OAuthError(.invalidRequest, "user_code is not supported (backchannel_user_code_parameter_supported is false)")
        case .parameterUnsupported(let name):
            OAuthError(.invalidRequest, "\(name) is not supported")
        case .missingScope:
            OAuthError(.invalidRequest, "scope is required")
        case .malformedScope:
            OAuthError(.invalidScope, "scope must be space-separated scope tokens")
        case .scopeWithoutOpenID:
            OAuthError(.invalidScope, "scope must include openid")
        case .scopeNotAllowed(let scope):
            OAuthError(.invalidScope, "the client may not request scope \(scope)")
        case .invalidRequestedExpiry:
            OAuthError(.invalidRequest,
                       "requested_expiry must be a whole number of seconds from \(RequestedExpiry.allowed.lowerBound) to \(RequestedExpiry.allowed.upperBound)")
        case .invalidBindingMessage(let why):
            OAuthError(.invalidBindingMessage, why)
        case .malformedAcrValues:
            OAuthError(.invalidRequest,
                       "acr_values must be at most \(AcrValues.maximumCount) space-separated values of at most \(AcrValues.maximumLength) characters")
        case .missingHint:
            OAuthError(.invalidRequest, "one of login_hint, id_token_hint or login_hint_token is required")
        case .severalHints:
            OAuthError(.invalidRequest, "send only one of login_hint, id_token_hint and login_hint_token")
        case .loginHintTokenUnsupported:
            OAuthError(.invalidRequest, "login_hint_token is not supported; name the user with login_hint or id_token_hint")
        case .invalidIDTokenHint(let why):
            OAuthError(.invalidRequest, why)
        case .unknownUser:
            OAuthError(.unknownUserID, "the hint does not identify a user of this tenant")
        case .userDisabled:
            OAuthError(.accessDenied, "the user is disabled")
        case .noActiveDevice:
            OAuthError(.accessDenied, "the user has no active device to approve on")
        case .userSuppressed(let retryAfter):
            OAuthError(.accessDenied,
                       "the user reported a request they did not make; new requests are refused for \(retryAfter) more seconds",
                       retryAfter: retryAfter)
        case .userRateLimited(let limit, let retryAfter):
            OAuthError(.accessDenied, "the user was sent \(limit) requests in the last minute, the most allowed",
                       retryAfter: retryAfter)
        }
    }
}
