import Foundation
import HTTPTypes
import Hummingbird

/// An error of a resource protected by a bearer access token (RFC 6750 §3): the UserInfo
/// endpoint. The challenge in `WWW-Authenticate` is what a client reads; a request that carried
/// no token at all gets a bare challenge, without an error (RFC 6750 §3.1).
struct BearerTokenError: Error, Sendable, Equatable, WireFailure {
    enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidToken = "invalid_token"
        case insufficientScope = "insufficient_scope"
    }

    /// nil: no token was presented.
    let code: Code?
    let errorDescription: String?
    /// The scope the resource needs, for `insufficient_scope`.
    var scope: String?

    static let missing = BearerTokenError(code: nil, errorDescription: nil)

    static func invalidRequest(_ description: String) -> BearerTokenError {
        BearerTokenError(code: .invalidRequest, errorDescription: description)
    }

    static func invalidToken(_ description: String) -> BearerTokenError {
        BearerTokenError(code: .invalidToken, errorDescription: description)
    }

    static func insufficientScope(_ scope: String) -> BearerTokenError {
        BearerTokenError(code: .insufficientScope, errorDescription: "the access token's scope does not include \(scope)",
                         scope: scope)
    }

    var status: HTTPResponse.Status {
        switch code {
        case nil, .invalidToken: .unauthorized
        case .invalidRequest: .badRequest
        case .insufficientScope: .forbidden
        }
    }

    var wireError: WireError {
        WireError(status, code: code?.rawValue, description: errorDescription, challenge: .bearer(scope: scope))
    }
}
