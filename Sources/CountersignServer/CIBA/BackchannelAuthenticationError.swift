/// Why `bc-authorize` refused a request; each case is one error of CIBA §13.
enum BackchannelAuthenticationError: OAuthFailure, Equatable {
    case deliveryModeUnsupported(Client.DeliveryMode)
    case parameterUnsupported(String)
    case invalidRequestedExpiry
    case invalidBindingMessage(String)
    case missingClientNotificationToken(Client.DeliveryMode)
    case malformedClientNotificationToken
    case missingHint
    case severalHints
    case invalidLoginHintToken(String)
    case expiredLoginHintToken
    case invalidIDTokenHint(String)
    case unknownUser
    /// The user is in none of the client's `allowed_groups`.
    case userNotAllowed
    case userCodeNotRegistered
    case malformedUserCode
    case userCodeNotSet
    case missingUserCode
    case invalidUserCode
    case userCodeLocked(retryAfter: Int)
    case clientRateLimited(perMinute: Int, retryAfter: Int)

    var oauthError: OAuthError {
        switch self {
        case .deliveryModeUnsupported(let mode):
            OAuthError(.unauthorizedClient, "this tenant does not deliver tokens in \(mode.rawValue) mode; register the client for poll or ping")
        case .parameterUnsupported(let name):
            OAuthError(.invalidRequest, "\(name) is not supported")
        case .invalidRequestedExpiry:
            OAuthError(.invalidRequest,
                       "requested_expiry must be a whole number of seconds from \(RequestedExpiry.allowed.lowerBound) to \(RequestedExpiry.allowed.upperBound)")
        case .invalidBindingMessage(let why):
            OAuthError(.invalidBindingMessage, why)
        case .missingClientNotificationToken(let mode):
            OAuthError(.invalidRequest, "client_notification_token is required for a client of the \(mode.rawValue) delivery mode")
        case .malformedClientNotificationToken:
            OAuthError(.invalidRequest,
                       "client_notification_token must be at most \(ClientNotificationToken.maximumLength) characters of the RFC 6750 b64token syntax")
        case .missingHint:
            OAuthError(.invalidRequest, "one of login_hint, id_token_hint or login_hint_token is required")
        case .severalHints:
            OAuthError(.invalidRequest, "send only one of login_hint, id_token_hint and login_hint_token")
        case .invalidLoginHintToken(let why):
            OAuthError(.invalidRequest, why)
        case .expiredLoginHintToken:
            OAuthError(.expiredLoginHintToken, "login_hint_token has expired")
        case .invalidIDTokenHint(let why):
            OAuthError(.invalidRequest, why)
        case .unknownUser:
            OAuthError(.unknownUserID, "the hint does not identify a user of this tenant")
        case .userNotAllowed:
            OAuthError(.accessDenied, "the user is in none of the groups that may use this client (allowed_groups)")
        case .userCodeNotRegistered:
            OAuthError(.invalidRequest, "user_code is accepted only from clients registered with backchannel_user_code_parameter")
        case .malformedUserCode:
            OAuthError(.invalidRequest, "user_code is longer than \(UserCodeCheck.maximumLength) characters")
        case .userCodeNotSet:
            OAuthError(.invalidUserCode, "the user has set no user code; send none")
        case .missingUserCode:
            OAuthError(.missingUserCode, "user_code is required for this user")
        case .invalidUserCode:
            OAuthError(.invalidUserCode, "user_code is wrong")
        case .userCodeLocked(let retryAfter):
            OAuthError(.accessDenied, "too many wrong user codes; the user code is not checked for \(retryAfter) more seconds",
                       retryAfter: retryAfter)
        case .clientRateLimited(let limit, let retryAfter):
            // 429 (RFC 6585 §4): the client is asked to slow down, not refused for good.
            OAuthError(.slowDown, "the client may send \(limit) authentication requests a minute; retry after \(retryAfter) seconds",
                       status: .tooManyRequests, retryAfter: retryAfter)
        }
    }
}
