import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/users/{id}/console-role`: who may sign in to the console.
///
/// - `GET`: the user's role, or 404;
/// - `PUT {"role": "tenant-admin" | "system-admin"}`: grants it (replacing any other);
/// - `DELETE`: takes it away.
///
/// A role is a set of admin rights (`ConsoleRole.rights`), so granting one is granting those
/// rights: the key needs `admin-keys:manage` and every right of the role, as for issuing a key;
/// `system-admin` further needs a system key and a user of the default tenant.
struct ConsoleRoleAdminRoutes: Sendable {
    let store: any ConsoleStore
    let users: any UserAdminStore
    let guardian: AdminGuard
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    struct RoleFields: Decodable {
        var role: String?
    }

    struct RoleView: Encodable, Sendable {
        let userID: String
        let role: ConsoleRole
        let grantedBy: String
        let grantedAt: Date
        enum CodingKeys: String, CodingKey {
            case role
            case userID = "user_id"
            case grantedBy = "granted_by"
            case grantedAt = "granted_at"
        }
        init(_ grant: ConsoleRoleGrant) {
            (userID, role, grantedBy, grantedAt) = (grant.userID, grant.role, grant.grantedBy, grant.grantedAt)
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let path = RouterPath("/admin/v1/tenants/{tenant}/users/{id}/console-role")
        router.get(path) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .usersRead)
            let user = try await users.user(in: context, tenant: tenant)
            guard let grant = try await store.role(userID: user.id) else {
                throw AdminError.notFound("a console role of user \(user.id)")
            }
            return try JSON.response(RoleView(grant))
        }
        router.put(path) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .adminKeysManage)
            let user = try await users.user(in: context, tenant: tenant)
            let fields = try await request.decodeJSON(RoleFields.self, limit: maximumBodySize)
            guard let raw = fields.role else { throw AdminError.missingField("role") }
            guard let role = ConsoleRole(rawValue: raw) else {
                throw AdminError.invalidField("role", "one of \(ConsoleRole.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if let lacking = role.rights.first(where: { !key.holds($0) }) { throw AdminError.cannotGrant(lacking) }
            if role == .systemAdmin {
                guard key.tenantID == nil else { throw AdminError.wrongTenant }
                guard tenant.isDefault else {
                    throw AdminError.invalidField("role", "system-admin is for users of the default tenant only")
                }
            }
            guard user.status == .active else { throw AdminError.conflict("user \(user.id) is not active") }
            let grant = ConsoleRoleGrant(
                userID: user.id, tenantID: tenant.id, role: role, grantedBy: "admin-key:\(key.id)", grantedAt: now())
            try await store.grant(grant, actor: "admin-key:\(key.id)")
            return try JSON.response(RoleView(grant))
        }
        router.delete(path) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .adminKeysManage)
            let user = try await users.user(in: context, tenant: tenant)
            guard try await store.revokeRole(userID: user.id, tenantID: tenant.id, actor: "admin-key:\(key.id)", at: now()) else {
                throw AdminError.notFound("a console role of user \(user.id)")
            }
            return Response(status: .noContent)
        }
    }
}
