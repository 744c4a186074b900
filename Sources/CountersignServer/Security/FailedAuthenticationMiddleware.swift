import Hummingbird
import NIOCore

/// Refuses a source that failed authentication too often of late (`FailedAuthenticationThrottle`)
/// before any route looks at its credentials, and counts each 401 a route answers to its source,
/// unless the request presented no credentials at all (`WireError.credentialsAbsent`).
/// It guards the groups of routes called with a secret (`TenantRoutes.group(takesSecret:)` and
/// the administration API): the client-authenticated OAuth endpoints, the admin key's routes.
/// Devices and bearer-token callers are left out: phones behind one carrier's address would
/// otherwise share one count.
struct FailedAuthenticationMiddleware: RouterMiddleware {
    typealias Context = CountersignRequestContext

    let throttle: FailedAuthenticationThrottle
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
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
        } catch let failure as any WireFailure where failure.wireError.status == .unauthorized {
            if !failure.wireError.credentialsAbsent { failed(source) }
            throw failure
        }
    }

    private func failed(_ source: String) {
        throttle.recordFailure(source)
        metrics.authenticationFailed()
    }
}
