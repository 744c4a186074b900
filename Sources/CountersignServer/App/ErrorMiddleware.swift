import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// The last word on errors: protocol errors pass through as they are; a path with no route
/// gets the JSON error body every other answer has; a database that cannot be reached is a
/// 503 with `Retry-After` (an OAuth error body on the OAuth endpoints); anything else is a
/// fault of the server, logged in full at error level and answered with a bare
/// `server_error`, so that no internal detail reaches the client and "alert on any 500"
/// keeps meaning "the server is wrong".
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    /// Seconds a client is asked to wait when the database is unreachable: long enough for a
    /// restart or a failover to finish, short enough that approvals still complete.
    static var databaseRetryAfter: Int { 5 }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            throw APIError.notFound("there is nothing at \(request.method.rawValue) \(request.uri.path)")
        } catch let error as any HTTPResponseError {
            logger.debug("request refused", metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "status": "\(error.status.code)",
            ])
            throw error
        } catch StorageError.unavailable(let why) {
            logger.warning("request refused: the database is unavailable", metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "error": "\(why)",
            ])
            throw Self.unavailable(path: request.uri.path)
        } catch {
            logger.error("request failed", metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "error": "\(Self.describe(error))",
            ])
            throw APIError(.internalServerError, .serverError, "the server could not answer this request; the cause is logged")
        }
    }

    /// The answer while the database is unreachable, in the error format of the endpoint.
    static func unavailable(path: String) -> any HTTPResponseError {
        let message = "the server cannot reach its database; try again shortly"
        if OAuthResponse.isEndpoint(path) {
            return OAuthError(.temporarilyUnavailable, message, status: .serviceUnavailable, retryAfter: databaseRetryAfter)
        }
        return APIError(.serviceUnavailable, .temporarilyUnavailable, message,
                        headers: [.retryAfter: String(databaseRetryAfter)])
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
