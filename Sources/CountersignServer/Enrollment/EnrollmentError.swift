import CountersignCore
import Foundation

/// Why an enrollment was refused. Each case is a 400 with its own code, except a bearer token
/// that is not valid (401), lacks the scope (403) or names a user who cannot enroll (403); a
/// ticket of another tenant is indistinguishable from an unknown one.
public enum EnrollmentError: Error, Sendable, Equatable {
    case invalidRequest(String)
    case invalidProof(String)
    case invalidKey(String)
    case invalidTicket
    case ticketExpired
    case ticketUsed
    case ticketRevoked
    case userNotActive
    /// Neither a ticket nor an access token, or both.
    case credentials(String)
    /// The bearer access token is not valid here (RFC 6750 §3.1 `invalid_token`, 401).
    case invalidAccessToken(String)
    /// The token lacks the scope its issuer requires: `countersign:enroll` for the tenant's own
    /// tokens, the configured one for a trusted issuer's (403).
    case insufficientScope(String)
    /// A trusted issuer's token is valid, but its username claim names nobody in the tenant
    /// (403): users are created by the administration API, never by a token, so signing in again
    /// would not help.
    case unknownUser(claim: String)
    /// A trusted issuer's token names a disabled user (403, as for an unknown user: the token
    /// itself is fine).
    case tokenUserNotActive
    /// The access token already enrolled a device: each enrolls one.
    case accessTokenUsed
    /// The sign-in behind the tenant's own access token is older than `maxAge` seconds: a new
    /// phone gets sign-in for good, so it needs a recent approval, as on the account page
    /// (RFC 9470 §3 `insufficient_user_authentication`, 401, with `max_age`).
    case staleSignIn(maxAge: Int)

    /// The code of `unknownUser`: the device protocol's only refusal that names a missing user.
    static let unknownUserCode = DeviceErrorCode(rawValue: "unknown_user")
    /// RFC 9470's code for a token whose authentication is too old.
    static let insufficientUserAuthenticationCode = DeviceErrorCode(rawValue: "insufficient_user_authentication")

    public var apiError: APIError {
        switch self {
        case .invalidRequest(let why): APIError(.badRequest, .invalidRequest, why)
        case .invalidProof(let why): APIError(.badRequest, .invalidProof, why)
        case .invalidKey(let why): APIError(.badRequest, .invalidKey, why)
        case .invalidTicket: APIError(.badRequest, .invalidTicket, "the enrollment ticket is not valid for this server")
        case .ticketExpired: APIError(.badRequest, .ticketExpired, "the enrollment ticket has expired; ask for a new one")
        case .ticketUsed: APIError(.badRequest, .ticketUsed, "the enrollment ticket has already been used")
        case .ticketRevoked: APIError(.badRequest, .ticketRevoked, "the enrollment ticket was revoked; ask for a new one")
        case .userNotActive: APIError(.badRequest, .userNotActive, "the user this ticket is for is not active")
        case .credentials(let why): APIError(.badRequest, .invalidRequest, why)
        case .invalidAccessToken(let why):
            APIError(.unauthorized, .invalidToken, why, headers: [
                .wwwAuthenticate: "Bearer realm=\"countersign\", error=\"invalid_token\", error_description=\"\(OAuthError.sanitized(why))\"",
            ])
        case .insufficientScope(let scope):
            APIError(.forbidden, .insufficientScope, "the access token must carry the scope \(scope)", headers: [
                .wwwAuthenticate: "Bearer realm=\"countersign\", error=\"insufficient_scope\", scope=\"\(OAuthError.sanitized(scope))\"",
            ])
        case .unknownUser(let claim):
            APIError(.forbidden, Self.unknownUserCode, "the token's \(claim) names no user of this tenant")
        case .tokenUserNotActive:
            APIError(.forbidden, .userNotActive, "the user the token names is not active")
        case .accessTokenUsed:
            APIError(.badRequest, .invalidRequest, "this access token has already enrolled a device; sign in again to enroll another")
        case .staleSignIn(let maxAge):
            APIError(.unauthorized, Self.insufficientUserAuthenticationCode,
                     "the sign-in behind this access token is older than \(maxAge) seconds; sign in again to enroll a device",
                     headers: [
                        .wwwAuthenticate: "Bearer realm=\"countersign\", error=\"insufficient_user_authentication\", "
                            + "error_description=\"a more recent sign-in is required\", max_age=\(maxAge)",
                     ])
        }
    }
}
