import Foundation
import HTTPTypes
import Hummingbird

/// An error of a resource protected by a bearer access token (RFC 6750 §3): the UserInfo
/// endpoint. The challenge in `WWW-Authenticate` is what a client reads; a request that carried
/// no token at all gets a bare challenge, without an error (RFC 6750 §3.1).
struct BearerTokenError: Error, Sendable, Equatable, HTTPResponseError {
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
    /// The tenant's issuer, named as the realm of the challenge.
    var realm: String?

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

    /// The `WWW-Authenticate` value: `Bearer realm="…"`, then the error's attributes.
    var challenge: String {
        var attributes = ["realm=\"\(OAuthError.sanitized(realm ?? "countersign"))\""]
        if let code { attributes.append("error=\"\(code.rawValue)\"") }
        if let errorDescription { attributes.append("error_description=\"\(OAuthError.sanitized(errorDescription))\"") }
        if let scope { attributes.append("scope=\"\(scope)\"") }
        return "Bearer " + attributes.joined(separator: ", ")
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = OAuthResponse.headers
        fields[.wwwAuthenticate] = challenge
        guard let code else { return Response(status: status, headers: fields) }
        var body = ["error": code.rawValue]
        if let errorDescription { body["error_description"] = OAuthError.sanitized(errorDescription) }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(data: try JSON.encode(body))))
    }
}
