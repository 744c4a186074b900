import CountersignCore
import Foundation

/// Why an enrollment was refused. Each case is a 400 with its own code, except a bearer token
/// that is not valid (401) or lacks the scope (403); a ticket of another tenant is
/// indistinguishable from an unknown one.
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
    /// The access token lacks `countersign:enroll` (403).
    case insufficientScope
    /// The access token already enrolled a device: each enrolls one.
    case accessTokenUsed

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
        case .insufficientScope:
            APIError(.forbidden, .insufficientScope, "the access token must carry the scope \(EnrollmentService.enrollScope)", headers: [
                .wwwAuthenticate: "Bearer realm=\"countersign\", error=\"insufficient_scope\", scope=\"\(EnrollmentService.enrollScope)\"",
            ])
        case .accessTokenUsed:
            APIError(.badRequest, .invalidRequest, "this access token has already enrolled a device; sign in again to enroll another")
        }
    }
}
