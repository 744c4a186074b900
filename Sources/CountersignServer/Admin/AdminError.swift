import CountersignCore
import Foundation

/// Failures of the administration API, each one wire error.
public enum AdminError: Error, Sendable, Equatable {
    case invalidField(String, String)
    case missingField(String)
    case notFound(String)
    case conflict(String)
    case missingCredentials
    case invalidCredentials
    case missingRight(AdminRight)
    case wrongTenant
    case cannotGrant(AdminRight)
    case cannotRevoke(AdminRight)
    /// Another wrong secret for a key id that failed too often this minute.
    case throttled(retryAfter: Int)

    public var apiError: APIError {
        switch self {
        case .invalidField(let field, let why): .badRequest("field \(field) is invalid: \(why)")
        case .missingField(let field): .badRequest("field \(field) is required")
        case .notFound(let what): .notFound("\(what) was not found")
        case .conflict(let why): APIError(.conflict, .conflict, why)
        case .missingCredentials:
            APIError(.unauthorized, .invalidToken, "an admin API key is required: Authorization: Bearer <key>",
                     headers: [.wwwAuthenticate: "Bearer realm=\"countersign-admin\""])
        case .invalidCredentials:
            APIError(.unauthorized, .invalidToken, "the admin API key is unknown or revoked",
                     headers: [.wwwAuthenticate: "Bearer realm=\"countersign-admin\", error=\"invalid_token\""])
        case .missingRight(let right):
            APIError(.forbidden, .insufficientRights, "this key lacks the right \(right.rawValue)",
                     missingRight: right.rawValue)
        case .wrongTenant:
            APIError(.forbidden, .insufficientRights, "this key belongs to another tenant")
        case .cannotRevoke(let right):
            APIError(.forbidden, .insufficientRights,
                     "a key can only revoke keys whose rights it holds itself; it lacks \(right.rawValue)",
                     missingRight: right.rawValue)
        case .throttled(let wait):
            APIError(.tooManyRequests, DeviceErrorCode(rawValue: "slow_down"),
                     "too many failed authentications for this admin key; try again in \(wait) seconds",
                     headers: [.retryAfter: String(wait)])
        case .cannotGrant(let right):
            APIError(.forbidden, .insufficientRights, "a key can only grant rights it holds itself; it lacks \(right.rawValue)",
                     missingRight: right.rawValue)
        }
    }
}

/// What an admin key may do. A key holds a set of rights; a system key (no tenant) reaches
/// every tenant, a tenant key only its own.
public enum AdminRight: String, Codable, Sendable, CaseIterable, Comparable {
    case tenantsManage = "tenants:manage"
    case adminKeysManage = "admin-keys:manage"
    case clientsRead = "clients:read"
    case clientsManage = "clients:manage"
    case usersRead = "users:read"
    case usersManage = "users:manage"
    case enrollmentsCreate = "enrollments:create"
    case devicesRead = "devices:read"
    case devicesManage = "devices:manage"
    case auditRead = "audit:read"
    /// Set, show and delete a tenant's APNs and FCM credentials. Apart from `tenants:manage`
    /// because whoever holds a push credential can send notifications to every phone of the app.
    case pushCredentialsManage = "push-credentials:manage"
    /// Change a tenant's authentication policy: which factors requests require, the PIN limit,
    /// the per-user rate limit. Apart because it sets how hard every sign-in is.
    case authenticationPolicyManage = "authentication-policy:manage"
    /// Set, show and delete a tenant's webhooks, and list its queued events. Apart from
    /// `tenants:manage` because a custom verifier decides whether the tenant's approvals pass.
    case webhooksManage = "webhooks:manage"
    /// Set, show and delete a tenant's LDAP directory and run its sync. Apart from
    /// `tenants:manage` because the directory's service account reads the organisation's
    /// people, and its sync creates and disables the tenant's users.
    case directoryManage = "directory:manage"
    /// Set, show and delete a tenant's mail settings (its SMTP server and login, sender and
    /// templates), send a test message and list its queued mail. Apart from `tenants:manage`
    /// because the SMTP login sends mail in the organisation's name.
    case mailManage = "mail:manage"
    /// Provision the tenant's users and groups over SCIM 2.0 (`/scim/v2/…`): the right of the
    /// key an identity provider (Entra ID, Okta) is given, and nothing else.
    case scim
    /// Register and manage the tenant's Shared Signals streams and poll them (`/ssf/…`): the
    /// right of the key a receiver of security events is given, and nothing else.
    case ssf

    public static func < (lhs: AdminRight, rhs: AdminRight) -> Bool { lhs.rawValue < rhs.rawValue }
}
