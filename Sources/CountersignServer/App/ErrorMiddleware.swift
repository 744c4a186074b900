import Foundation
import Hummingbird
import Logging

/// The last word on errors: protocol errors pass through as they are; a path with no route
/// gets the JSON error body every other answer has; anything else is a fault of the server,
/// logged in full at error level and answered with a bare `server_error`, so that no internal
/// detail reaches the client.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            throw APIError.notFound("there is nothing at \(request.method.rawValue) \(request.uri.path)")
        } catch let error as HTTPError where error.status == .methodNotAllowed {
            throw APIError(.methodNotAllowed, .invalidRequest, "\(request.method.rawValue) is not allowed on \(request.uri.path)")
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            logger.error("request failed", metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "error": "\(String(reflecting: error))",
            ])
            throw APIError(.internalServerError, .serverError, "the server could not answer this request; the cause is logged")
        }
    }
}
