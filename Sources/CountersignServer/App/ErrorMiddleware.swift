import Foundation
import Hummingbird
import Logging
import PostgresNIO

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
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            logger.error("request failed", metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "error": "\(Self.describe(error))",
            ])
            throw APIError(.internalServerError, .serverError, "the server could not answer this request; the cause is logged")
        }
    }

    /// What to log of a fault. A PostgreSQL error is reduced to the server's own message and
    /// SQLSTATE: its full reflection carries the statement's bound values (device names, push
    /// tokens), which have no place in a log.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            let state = error.serverInfo?[.sqlState] ?? "-"
            let message = error.serverInfo?[.message] ?? "\(error.code)"
            return "PostgreSQL \(state): \(message)"
        }
        return String(reflecting: error)
    }
}
