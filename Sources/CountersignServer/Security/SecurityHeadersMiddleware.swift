import HTTPTypes
import Hummingbird

/// Headers every answer carries, whatever route or error made it:
///
/// - `X-Content-Type-Options: nosniff`: a browser takes each answer as the media type it
///   declares, so a JSON answer that echoes input (an error description, a device name) is
///   never sniffed into HTML or script;
/// - `Strict-Transport-Security: max-age=31536000` when the public URL is https: a browser that
///   has reached the server once over TLS goes there over TLS only for a year, so nobody on the
///   way can strip TLS from a later visit. Without `includeSubDomains` (the server may run on a
///   domain whose other hosts are not its to decide for) and without `preload`. Over plain http
///   the header means nothing to a browser (RFC 6797 §8.1), so it is not sent.
///
/// It is the router's first middleware, outside the error middleware, so refusals get them too.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var strictTransportSecurity: String { "max-age=31536000" }

    let origin: PublicOrigin

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // Hummingbird's own refusals (a route it could not match or decode) keep their answer.
            response = try error.response(from: request, context: context)
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        if origin.base.hasPrefix("https://") {
            response.headers[.strictTransportSecurity] = Self.strictTransportSecurity
        }
        return response
    }
}
