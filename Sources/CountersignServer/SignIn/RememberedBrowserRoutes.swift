import CountersignCore
import Foundation
import Hummingbird

/// A user's remembered browsers as their account page and administrators see them: listed, and
/// forgotten one by one (audited `remembered_browser.forgotten`, with who did it). A session
/// signed in by a forgotten browser ends with it (`SessionAuthenticator.rememberedBrowser`).
struct RememberedBrowsers: Sendable {
    let database: any Database
    let audit: AuditLog
    let now: @Sendable () -> Date
    var repository = SQLRememberedBrowserRepository()

    /// The user's remembered browsers not expired, newest first.
    func list(userID: String, tenantID: String) async throws -> [RememberedBrowser] {
        try await repository.list(userID: userID, tenantID: tenantID, at: now(), on: database)
    }

    /// Forgets the user's remembered browser `id`; false when the user has none of that id.
    func forget(id: String, userID: String, tenantID: String, actor: String) async throws -> Bool {
        let date = now()
        return try await database.transaction { executor in
            guard let browser = try await repository.find(id: id, tenantID: tenantID, on: executor), browser.userID == userID,
                  try await repository.delete(id: id, tenantID: tenantID, on: executor) else { return false }
            try await audit.record(
                "remembered_browser.forgotten", actor: actor, tenantID: tenantID, target: ("remembered_browser", id),
                details: ["user_id": userID], at: date, on: executor)
            return true
        }
    }
}

/// Remembered browsers in the admin API, below `/admin/v1/tenants/{tenant}/users/{id}`:
///
/// - `GET …/remembered-browsers` (`users:read`): where and in what each was remembered, what the
///   phone gave then, when it was last used and when it expires; never its key or cookie;
/// - `DELETE …/remembered-browsers/{browser}` (`devices:manage`): forgets one.
struct RememberedBrowserAdminRoutes: Sendable {
    let browsers: RememberedBrowsers
    let users: any UserAdminStore
    let guardian: AdminGuard

    struct View: Encodable, Sendable {
        let id: String
        let userID: String
        let acr: String
        let amr: [String]
        let authTime: Date
        let ipAddress: String?
        let userAgent: String?
        let createdAt: Date
        let lastUsedAt: Date
        let expiresAt: Date

        init(_ browser: RememberedBrowser) {
            id = browser.id
            userID = browser.userID
            acr = browser.context.acr
            amr = browser.context.amr
            authTime = browser.authTime
            ipAddress = browser.ipAddress
            userAgent = browser.userAgent
            createdAt = browser.createdAt
            lastUsedAt = browser.lastUsedAt
            expiresAt = browser.expiresAt
        }

        enum CodingKeys: String, CodingKey {
            case id, acr, amr
            case userID = "user_id"
            case authTime = "auth_time"
            case ipAddress = "ip_address"
            case userAgent = "user_agent"
            case createdAt = "created_at"
            case lastUsedAt = "last_used_at"
            case expiresAt = "expires_at"
        }
    }

    struct List: Encodable, Sendable {
        let items: [View]
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/users/{id}/remembered-browsers"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .usersRead)
            let user = try await users.user(in: context, tenant: tenant)
            return try JSON.response(List(items: try await browsers.list(userID: user.id, tenantID: tenant.id).map(View.init)))
        }
        router.delete(RouterPath(base + "/{browser}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .devicesManage)
            let user = try await users.user(in: context, tenant: tenant)
            let id = try context.parameters.require("browser")
            guard try await browsers.forget(id: id, userID: user.id, tenantID: tenant.id, actor: "admin-key:\(key.id)") else {
                throw AdminError.notFound("remembered browser \(id)")
            }
            return Response(status: .noContent)
        }
    }
}
