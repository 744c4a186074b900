import CountersignCore
import Foundation

/// Why an enrollment was refused. Each case is a 400 with its own code; a ticket of another
/// tenant is indistinguishable from an unknown one.
public enum EnrollmentError: Error, Sendable, Equatable {
    case invalidRequest(String)
    case invalidProof(String)
    case invalidKey(String)
    case invalidTicket
    case ticketExpired
    case ticketUsed
    case ticketRevoked
    case userNotActive

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
        }
    }
}
