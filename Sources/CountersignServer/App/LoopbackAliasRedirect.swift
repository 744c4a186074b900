import Hummingbird

/// Sends a browser that reached a server on this computer at a loopback address
/// (`http://127.0.0.1:8080`, `http://[::1]:8080`) to the same page at the public URL
/// (`http://localhost:8080`, the default for a loopback listener): passkeys work only at a
/// domain name, and the session cookie belongs to one host, so a sign-in begun at one address
/// and ended at the other would lose its cookie on the way.
///
/// Only page views move (`GET` or `HEAD` asking for HTML); API calls, devices' signed requests
/// among them, are answered where they arrive, as before.
struct LoopbackAliasRedirect<Context: RequestContext>: RouterMiddleware {
    let origin: PublicOrigin

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head,
              request.headers[.accept]?.contains("text/html") == true,
              let host = request.head.authority,
              let target = Self.target(forHost: host, origin: origin.base) else {
            return try await next(request, context)
        }
        return Response(status: .temporaryRedirect, headers: [.location: target + request.uri.description])
    }

    /// The public origin, when it is `http://localhost:<port>` and `host` is a loopback address
    /// at that port.
    static func target(forHost host: String, origin: String) -> String? {
        guard origin.hasPrefix("http://localhost:") else { return nil }
        let port = origin.dropFirst("http://localhost:".count)
        guard host.hasSuffix(":" + port) else { return nil }
        return ["127.0.0.1", "[::1]"].contains(String(host.dropLast(port.count + 1))) ? origin : nil
    }
}
