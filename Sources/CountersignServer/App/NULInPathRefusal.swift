import Hummingbird

/// Refuses a path that decodes to a NUL character (`%00`) with 400 before any route reads it:
/// path segments become tenant slugs, user ids and device ids that are looked up as text, and
/// PostgreSQL cannot hold a NUL, where SQLite would just find nothing.
struct NULInPathRefusal<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.path.contains("%00") {
            throw APIError.badRequest("the path must not contain a NUL character (%00)")
        }
        return try await next(request, context)
    }
}
