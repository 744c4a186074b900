import CountersignSCIM
import CountersignCore
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// The last word on errors, one per surface: a feature's `WireFailure` is written in the
/// surface's format; a path with no route gets the JSON error body every other answer has; a
/// database that cannot be reached is a 503 with `Retry-After`; anything else is a fault of
/// the server, logged in full at error level and answered with a bare `server_error`, so that
/// no internal detail reaches the client and "alert on any 500" keeps meaning "the server is
/// wrong".
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = CountersignRequestContext

    let surface: ErrorSurface
    let logger: Logger
    /// The router's methods by path, where this middleware answers for paths no route took.
    var methods: RouteMethods?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            // SCIM's paths answer in SCIM's format even where no route took the request.
            let surface = Self.isSCIM(request.uri.path) ? .scim : surface
            if let allowed = methods?.allowed(at: request.uri.path), !allowed.isEmpty {
                var response = surface.response(for: APIError(
                    .methodNotAllowed, DeviceErrorCode(rawValue: "method_not_allowed"),
                    "\(request.uri.path) does not take \(request.method.rawValue); it takes \(allowed.joined(separator: ", "))"
                ).wireError)
                response.headers[.allow] = allowed.joined(separator: ", ")
                return response
            }
            return surface.response(
                for: APIError.notFound("there is nothing at \(request.method.rawValue) \(request.uri.path)").wireError)
        } catch let failure as any WireFailure {
            let error = failure.wireError
            logger.debug("request refused", metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "status": "\(error.status.code)",
            ])
            return surface.response(for: error)
        } catch let error as any HTTPResponseError {
            // Hummingbird's own refusals (a malformed request it could not route) keep their answer.
            throw error
        } catch StorageError.unavailable(let why) {
            logger.warning("request refused: the database is unavailable", metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "error": "\(why)",
            ])
            return surface.response(for: .databaseUnavailable)
        } catch {
            logger.error("request failed", metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "error": "\(Self.describe(error))",
            ])
            return surface.response(for: .serverError)
        }
    }

    /// Whether `path` is below a tenant's SCIM base (`/scim/v2/…` or `/t/<slug>/scim/v2/…`).
    static func isSCIM(_ path: String) -> Bool {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let rest = segments.first == "t" ? segments.dropFirst(2) : segments
        return rest.prefix(2).elementsEqual(["scim", "v2"])
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

/// The formats failures are written in: each group of routes names its surface.
enum ErrorSurface: Sendable {
    /// The OAuth and OpenID endpoints (RFC 6749 §5.2, CIBA §13, RFC 6750 §3): `error` and
    /// `error_description` only, never cached; a 401 challenges with the tenant's issuer as realm.
    case oauth
    /// The device and administration APIs: `ErrorBody`, with `missing_right`, `deregistration`
    /// and `attempts_remaining` where the code has them.
    case api
    /// CyberArk's `/Mobile/…` calls: the status, and `"success": false` with the reason in
    /// `Message` (`CyberArkMobileRoutes`).
    case mobileEnvelope
    /// The hosted sign-in and account pages: the `error` page, in the tenant's name, with the
    /// heading, the message, the link back and the error code.
    case page
    /// The console's pages: the console's message page, which leads back into the console.
    case console
    /// The hosted pages' scripts (the waits, the passkey buttons): the status, and
    /// `{"error", "error_description"}` with `redirect` where the page must go on elsewhere.
    /// Every script of the pages reads this one shape.
    case script
    /// SCIM (`SCIMRoutes`): RFC 7644 §3.12's error document, `application/scim+json`, with
    /// `scimType` when the code is one of SCIM's.
    case scim

    func response(for error: WireError) -> Response {
        switch self {
        case .oauth: Self.oauthResponse(error)
        case .api: Self.apiResponse(error)
        case .mobileEnvelope: CyberArkMobileRoutes.failure(error)
        case .page, .console: Self.pageResponse(error, console: self == .console)
        case .script: Self.scriptResponse(error)
        case .scim: Self.scimResponse(error)
        }
    }

    /// SCIM's `scimType` values (RFC 7644 §3.12, Table 9).
    private static let scimTypes: Set<String> = [
        "invalidFilter", "tooMany", "uniqueness", "mutability", "invalidSyntax", "invalidPath", "noTarget",
        "invalidValue", "invalidVers", "sensitive",
    ]

    private static func scimResponse(_ error: WireError) -> Response {
        var fields = error.headers
        fields[.contentType] = SCIMRoutes.mediaType
        fields[.cacheControl] = "no-store"
        if let retryAfter = error.retryAfter { fields[.retryAfter] = String(retryAfter) }
        let document = SCIMErrorDocument(
            status: Int(error.status.code), scimType: error.code.flatMap { scimTypes.contains($0) ? $0 : nil },
            detail: error.description)
        return Response(status: error.status, headers: fields, body: .init(byteBuffer: ByteBuffer(data: document.json.serialized)))
    }

    private static func pageResponse(_ error: WireError, console: Bool) -> Response {
        var headers = error.headers
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        let heading = error.heading ?? defaultHeading(error.status)
        let tenant = error.tenant ?? PageTenant(name: "Countersign", base: "")
        let message = error.description ?? "Try again later, or go back to the application and start again."
        if console {
            return Pages.shared.response(
                "console-message", ConsoleMessagePage(tenantName: tenant.name, base: tenant.base, heading: heading, message: message),
                status: error.status, headers: headers)
        }
        return Pages.shared.response(
            "error",
            ErrorPage(tenantName: tenant.name, heading: heading, message: message, code: error.code ?? "server_error",
                      back: error.back.map { ErrorPage.Back(href: tenant.base + $0.path, label: $0.label) }),
            status: error.status, headers: headers)
    }

    private static func defaultHeading(_ status: HTTPResponse.Status) -> String {
        switch status {
        case .notFound: "Page not found"
        case .serviceUnavailable: "Sign-in is unavailable for now"
        case .internalServerError: "Something went wrong"
        default: "This page cannot be shown"
        }
    }

    private static func scriptResponse(_ error: WireError) -> Response {
        var fields = error.headers
        fields[.contentType] = "application/json"
        fields[.cacheControl] = "no-store"
        if let retryAfter = error.retryAfter { fields[.retryAfter] = String(retryAfter) }
        var body = ["error": error.code ?? "invalid_request"]
        if let description = error.description { body["error_description"] = description }
        if let redirect = error.redirect { body["redirect"] = redirect }
        return Response(status: error.status, headers: fields, body: encoded(body))
    }

    private static func oauthResponse(_ error: WireError) -> Response {
        var fields = OAuthResponse.headers
        for field in error.headers { fields[field.name] = field.value }
        let realmAttribute = "realm=\"\(OAuthError.sanitized(error.realm ?? "countersign"))\""
        switch error.challenge {
        case .basic:
            fields[.wwwAuthenticate] = "Basic \(realmAttribute)"
        case .bearer(let scope):
            var attributes = [realmAttribute]
            if let code = error.code { attributes.append("error=\"\(code)\"") }
            if let description = error.description {
                attributes.append("error_description=\"\(OAuthError.sanitized(description))\"")
            }
            if let scope { attributes.append("scope=\"\(scope)\"") }
            fields[.wwwAuthenticate] = "Bearer " + attributes.joined(separator: ", ")
        case nil:
            // RFC 9110 §15.5.2: a 401 names the scheme the client may authenticate with.
            if error.status == .unauthorized, fields[.wwwAuthenticate] == nil {
                fields[.wwwAuthenticate] = "Basic \(realmAttribute)"
            }
        }
        if let retryAfter = error.retryAfter { fields[.retryAfter] = String(retryAfter) }
        // RFC 6750 §3.1: a request that carried no token gets the bare challenge, and no body
        // means no media type.
        guard let code = error.code else {
            fields[.contentType] = nil
            return Response(status: error.status, headers: fields)
        }
        var body = ["error": code]
        if let description = error.description { body["error_description"] = OAuthError.sanitized(description) }
        return Response(status: error.status, headers: fields, body: encoded(body))
    }

    private static func apiResponse(_ error: WireError) -> Response {
        var fields = error.headers
        fields[.contentType] = "application/json"
        fields[.cacheControl] = "no-store"
        if let retryAfter = error.retryAfter { fields[.retryAfter] = String(retryAfter) }
        let body = ErrorBody(error: error.code ?? "invalid_request", errorDescription: error.description,
                             missingRight: error.missingRight, deregistration: error.deregistration,
                             attemptsRemaining: error.attemptsRemaining)
        return Response(status: error.status, headers: fields, body: encoded(body))
    }

    private static func encoded(_ body: some Encodable) -> ResponseBody {
        // These bodies are strings and integers only: encoding them cannot fail.
        .init(byteBuffer: ByteBuffer(data: (try? JSON.encode(body)) ?? Data(#"{"error":"server_error"}"#.utf8)))
    }
}
