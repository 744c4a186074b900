import Foundation
import Hummingbird

/// The access token a request presents (RFC 6750 §2): in `Authorization: Bearer <token>`, or
/// for a POST with a form body in its `access_token` parameter — one of the two, never both.
/// The query-string method (§2.3) is not read: URLs end up in logs. An `Authorization` header of
/// another scheme is not a bearer token, so the request counts as presenting none.
enum BearerToken {
    static func read(_ request: Request) async throws -> String {
        let header = try request.headers[.authorization].flatMap(fromHeader)
        var posted: String?
        if request.method == .post, request.headers[.contentType].map(isForm) == true {
            do {
                posted = try await FormParameters.read(request)["access_token"]
            } catch let error as FormError {
                throw BearerTokenError.invalidRequest(error.oauthError.errorDescription)
            }
        }
        switch (header, posted) {
        case (let token?, nil), (nil, let token?): return token
        case (nil, nil): throw BearerTokenError.missing
        case (.some, .some): throw BearerTokenError.invalidRequest("send the access token once, not in the header and the body")
        }
    }

    /// The token of a `Bearer` header, nil for another scheme. RFC 6750 §2.1: `b64token` syntax.
    static func fromHeader(_ value: String) throws -> String? {
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.first?.lowercased() == "bearer" else { return nil }
        guard parts.count == 2 else { throw BearerTokenError.invalidRequest("the Bearer scheme needs a token") }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, token.unicodeScalars.allSatisfy(isTokenCharacter) else {
            throw BearerTokenError.invalidToken("the bearer token is malformed")
        }
        return token
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "-", ".", "_", "~", "+", "/", "=": true
        default: false
        }
    }

    private static func isForm(_ contentType: String) -> Bool {
        contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            == "application/x-www-form-urlencoded"
    }
}
