import Hummingbird
import NIOCore

/// Refuses a source that failed authentication too often of late (`FailedAuthenticationThrottle`)
/// before any route looks at its credentials, and counts each 401 a route answers to its source —
/// on the endpoints relying parties and administrators call with a secret: the client-
/// authenticated OAuth endpoints and the administration API. Devices and bearer-token callers
/// are left out: phones behind one carrier's address would otherwise share one count.
struct FailedAuthenticationMiddleware: RouterMiddleware {
    typealias Context = CountersignRequestContext

    let throttle: FailedAuthenticationThrottle
    let metrics: ServerMetrics

    /// The client-authenticated endpoints, below a tenant's issuer.
    static let clientEndpoints: Set<Substring> = ["/token", "/bc-authorize", "/bc-authorize/receipt", "/revoke", "/introspect",
                                                  "/totp/verify"]

    /// Whether `path` is called with a client secret or assertion, or an admin key.
    static func isThrottled(_ path: String) -> Bool {
        var endpoint = Substring(path)
        if endpoint.hasPrefix("/t/") {
            let slugAndRest = endpoint.dropFirst(3)
            endpoint = slugAndRest.firstIndex(of: "/").map { slugAndRest[$0...] } ?? ""
        }
        return endpoint.hasPrefix("/admin/") || endpoint.hasPrefix("/Mobile/") || clientEndpoints.contains(endpoint)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.isThrottled(request.uri.path) else { return try await next(request, context) }
        let source = FailedAuthenticationThrottle.source(context.remoteAddress?.ipAddress ?? "unknown")
        if let wait = throttle.retryAfter(source) {
            metrics.authenticationThrottled(limit: "source")
            throw OAuthError(.slowDown, "too many failed authentications from this address; try again in \(wait) seconds",
                             status: .tooManyRequests, retryAfter: wait)
        }
        do {
            let response = try await next(request, context)
            if response.status == .unauthorized { failed(source) }
            return response
        } catch let error as any HTTPResponseError where error.status == .unauthorized {
            failed(source)
            throw error
        } catch let error as any OAuthFailure where error.oauthError.status == .unauthorized {
            failed(source)
            throw error
        }
    }

    private func failed(_ source: String) {
        throttle.recordFailure(source)
        metrics.authenticationFailed()
    }
}
