import Foundation
import HTTPTypes

/// A failure a request can end in. Every feature error conforms, mapping each of its cases to
/// exactly one `WireError`; routes throw it and never convert it, and the error middleware of
/// the route's surface (`ErrorMiddleware`) writes it in that surface's format.
protocol WireFailure: Error {
    var wireError: WireError { get }
}

/// What a failure says on the wire, before a surface gives it a format: the status, the error
/// code and its description, and the few members and headers some codes need.
struct WireError: Error, Sendable, Equatable, WireFailure {
    /// How the client is asked to authenticate again on the OAuth surface, whose challenges name
    /// the tenant's issuer as their realm (RFC 9110 §15.5.2).
    enum Challenge: Sendable, Equatable {
        /// HTTP Basic for the client (RFC 6749 §5.2): the OAuth surface's default on a 401.
        case basic
        /// A bearer-token challenge (RFC 6750 §3), with the error's code, description and scope.
        case bearer(scope: String?)
    }

    var status: HTTPResponse.Status
    /// nil only for a bearer challenge to a request that carried no token (RFC 6750 §3.1).
    var code: String?
    var description: String?
    var challenge: Challenge?
    /// Headers the feature writes itself (a challenge of its own scheme, say).
    var headers: HTTPFields
    /// Seconds after which the same request may succeed (`Retry-After`, RFC 9110 §10.2.3).
    var retryAfter: Int?
    /// The admin right a refused key lacks (`missing_right`).
    var missingRight: String?
    /// A signed deregistration notice for a device the server no longer knows.
    var deregistration: String?
    /// PIN attempts left before the enrollment is removed.
    var attemptsRemaining: Int?
    /// The realm of a challenge: the issuer of the tenant the request was for, which
    /// `TenantMiddleware` fills in.
    var realm: String?
    /// A 401 to a request that presented no credentials at all. Nothing was checked, so it is no
    /// failed authentication: `FailedAuthenticationMiddleware` counts only a credential that was
    /// presented and found wrong. Otherwise a client behind a shared proxy that sends no
    /// `Authorization` header (or a browser that opens an admin URL) would use up the address's
    /// budget for everyone behind it.
    var credentialsAbsent = false
    /// On the page surfaces: the heading above the message (else one the status chooses), and
    /// the link the page offers back (below the tenant's base).
    var heading: String?
    var back: PageLink?
    /// On the script surface: where the page's script sends the browser on (a sign-in again).
    var redirect: String?
    /// The tenant the request was for, as its pages name it: `TenantMiddleware` fills it in,
    /// so that an error page carries the tenant's name and links below its base.
    var tenant: PageTenant?

    init(_ status: HTTPResponse.Status, code: String?, description: String?, challenge: Challenge? = nil,
         headers: HTTPFields = [:], retryAfter: Int? = nil, missingRight: String? = nil, deregistration: String? = nil,
         attemptsRemaining: Int? = nil, heading: String? = nil, back: PageLink? = nil, redirect: String? = nil) {
        self.status = status
        self.code = code
        self.description = description
        self.challenge = challenge
        self.headers = headers
        self.retryAfter = retryAfter
        self.missingRight = missingRight
        self.deregistration = deregistration
        self.attemptsRemaining = attemptsRemaining
        self.heading = heading
        self.back = back
        self.redirect = redirect
    }

    var wireError: WireError { self }

    /// The answer to any fault of the server: no detail of it reaches the client.
    static let serverError = WireError(
        .internalServerError, code: "server_error", description: "the server could not answer this request; the cause is logged")

    /// The answer while the database is unreachable: long enough for a restart or a failover to
    /// finish, short enough that approvals still complete.
    static let databaseUnavailable = WireError(
        .serviceUnavailable, code: "temporarily_unavailable",
        description: "the server cannot reach its database; try again shortly", retryAfter: 5)
}

/// A link an error page offers, below the tenant's base: "Back to your account".
struct PageLink: Sendable, Equatable {
    let path: String
    let label: String

    static let account = PageLink(path: "/account", label: "Back to your account")
    static let console = PageLink(path: "/console", label: "Open the console")
}

/// The tenant a page belongs to: its name, shown on every page, and the base of its paths
/// (`""` for the default tenant, `/t/<slug>` for the others).
struct PageTenant: Sendable, Equatable {
    let name: String
    let base: String
}
