import Foundation
import HTTPTypes
import Hummingbird

/// An error of the OAuth endpoints (`bc-authorize`, `token`, the receipt): the JSON body holds
/// `error` and `error_description` only (RFC 6749 §5.2, CIBA §13), never the device API's extra
/// members, and the answer is never cached.
///
/// Each feature error of these endpoints (`ClientAuthenticationError`, `FormError`,
/// `BackchannelAuthenticationError`, `TokenRequestError`) maps every case to exactly one
/// `OAuthError`.
public struct OAuthError: Error, Sendable, Equatable, WireFailure {
    public enum Code: String, Sendable, CaseIterable {
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        case invalidScope = "invalid_scope"
        case unknownUserID = "unknown_user_id"
        case unauthorizedClient = "unauthorized_client"
        case invalidBindingMessage = "invalid_binding_message"
        case expiredLoginHintToken = "expired_login_hint_token"
        case missingUserCode = "missing_user_code"
        case invalidUserCode = "invalid_user_code"
        /// RFC 9396 §5: `authorization_details` is malformed, names a type the client may not
        /// use, or holds a field its type does not allow.
        case invalidAuthorizationDetails = "invalid_authorization_details"
        case accessDenied = "access_denied"
        case invalidGrant = "invalid_grant"
        case unsupportedGrantType = "unsupported_grant_type"
        case authorizationPending = "authorization_pending"
        case slowDown = "slow_down"
        case expiredToken = "expired_token"
        /// `POST /totp/verify`: the one-time code is wrong or was already used.
        case invalidCode = "invalid_code"
        /// RFC 6749 §4.1.2.1: the server cannot answer for now (the database is unreachable);
        /// sent with 503 and `Retry-After`.
        case temporarilyUnavailable = "temporarily_unavailable"
        /// RFC 6749 §4.1.2.1: the authorization endpoint issues codes only (`response_type=code`).
        case unsupportedResponseType = "unsupported_response_type"
        /// OpenID Connect Core §3.1.2.6: `prompt=none` and the user has no session that answers.
        case loginRequired = "login_required"
        /// OpenID Connect Core §3.1.2.6: `prompt=none`, and the request needs the user to
        /// approve anew (an enrollment, or a native app: RFC 8252 §8.6).
        case interactionRequired = "interaction_required"
        /// OpenID Connect Core §3.1.2.6: `request` and `registration` are not implemented.
        case requestNotSupported = "request_not_supported"
        case registrationNotSupported = "registration_not_supported"
        /// RFC 9126 §2.2, RFC 9101 §6.2: a `request_uri` that is unknown, used or expired.
        case invalidRequestURI = "invalid_request_uri"
        /// RFC 6749 §4.1.2.1: the server met an error it did not expect.
        case serverError = "server_error"
    }

    public var code: Code
    public var status: HTTPResponse.Status
    /// Already restricted to the characters RFC 6749 §5.2 allows.
    public let errorDescription: String
    /// Seconds after which the same request may succeed (`Retry-After`, RFC 9110 §10.2.3).
    public var retryAfter: Int?

    /// `status` defaults to what CIBA §13 and RFC 6749 §5.2 give the code at the backchannel
    /// endpoint: 401 for `invalid_client`, 403 for `access_denied`, 400 for everything else.
    /// The token endpoint answers `access_denied` with 400 (CIBA §11), and says so.
    public init(_ code: Code, _ description: String, status: HTTPResponse.Status? = nil, retryAfter: Int? = nil) {
        self.code = code
        self.retryAfter = retryAfter
        self.status = status ?? Self.defaultStatus(code)
        self.errorDescription = Self.sanitized(description)
    }

    static func defaultStatus(_ code: Code) -> HTTPResponse.Status {
        switch code {
        case .invalidClient: .unauthorized
        case .accessDenied: .forbidden
        default: .badRequest
        }
    }

    /// RFC 6749 §5.2: `error_description` uses `%x20-21 / %x23-5B / %x5D-7E` only. A quote
    /// becomes an apostrophe; any other character outside the set becomes `?`.
    static func sanitized(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar -> Unicode.Scalar in
            switch scalar.value {
            case 0x22: "'"
            case 0x20...0x21, 0x23...0x5B, 0x5D...0x7E: scalar
            default: "?"
            }
        }))
    }

    var wireError: WireError {
        WireError(status, code: code.rawValue, description: errorDescription,
                  challenge: status == .unauthorized ? .basic : nil, retryAfter: retryAfter)
    }
}

/// A feature error of the OAuth endpoints: each case is one `OAuthError`.
protocol OAuthFailure: WireFailure {
    var oauthError: OAuthError { get }
}

extension OAuthFailure {
    var wireError: WireError { oauthError.wireError }
}

/// Answers of the OAuth endpoints, success or failure alike: JSON, not stored by any cache
/// (RFC 6749 §5.1; OpenID Connect Core §3.1.3.3).
enum OAuthResponse {
    static var headers: HTTPFields {
        [.contentType: "application/json", .cacheControl: "no-store", pragma: "no-cache"]
    }

    /// `Pragma`, for HTTP/1.0 caches; HTTPTypes has no constant for it.
    private static let pragma = HTTPField.Name("Pragma")!

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: try JSON.encode(value))))
    }
}
