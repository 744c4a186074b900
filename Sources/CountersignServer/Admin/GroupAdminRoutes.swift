import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird

/// `/admin/v1/tenants/{tenant}/groups`: a tenant's groups of users and who is in them, and
/// `…/users/{id}/groups`, the groups a user is in. Reading takes `users:read`, every change
/// `users:manage`, as for the users themselves.
///
/// A group kept by the tenant's directory or a SCIM client may still be changed here: an admin
/// fixing a membership by hand should not have to wait for the directory. The answer says that
/// the next sync may undo it (`Countersign-Sync-Notice`), since the source stays the group's.
struct GroupAdminRoutes: Sendable {
    let store: any GroupAdminStore
    let guardian: AdminGuard
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    /// The header on an answer to a change of a group another source keeps.
    static let syncNotice = HTTPField.Name("Countersign-Sync-Notice")!

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/groups"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .usersRead)
            let page = try PageRequest(request)
            let groups = try await store.groups(
                tenantID: tenant.id, namePrefix: try UserAdminRoutes.search(request), source: try Self.source(request),
                after: page.cursor, limit: page.fetchLimit)
            return try JSON.response(page.page(groups, cursor: \.group.id))
        }
        router.post(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .usersManage)
            let registration = try await request.decodeJSON(GroupRegistration.self, limit: maximumBodySize)
            let date = stamp()
            let group = try registration.registered(id: Identifier.make("grp", at: date), tenantID: tenant.id, at: date)
            try await store.create(group, actor: "admin-key:\(key.id)")
            return try JSON.response(GroupRecord(group: group, memberCount: 0), status: .created)
        }
        router.get(RouterPath(base + "/{id}")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .usersRead)
            return try JSON.response(try await find(context, tenant: tenant))
        }
        router.patch(RouterPath(base + "/{id}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .usersManage)
            let existing = try await find(context, tenant: tenant).group
            let registration = try await request.decodeJSON(GroupRegistration.self, limit: maximumBodySize)
            let group = try registration.applied(to: existing, at: stamp())
            guard let stored = try await store.update(group, actor: "admin-key:\(key.id)") else {
                throw AdminError.notFound("group \(group.id)")
            }
            return Self.noticed(try JSON.response(stored), group)
        }
        router.delete(RouterPath(base + "/{id}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .usersManage)
            let id = try context.parameters.require("id")
            guard let deleted = try await store.delete(id: id, tenantID: tenant.id, actor: "admin-key:\(key.id)", at: now())
            else { throw AdminError.notFound("group \(id)") }
            return Self.noticed(Response(status: .noContent), deleted)
        }
        router.get(RouterPath(base + "/{id}/members")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .usersRead)
            let group = try await find(context, tenant: tenant).group
            let page = try PageRequest(request)
            let members = try await store.members(groupID: group.id, after: page.cursor, limit: page.fetchLimit)
            return try JSON.response(page.page(members, cursor: \.userID))
        }
        router.put(RouterPath(base + "/{id}/members/{user}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .usersManage)
            let group = try await find(context, tenant: tenant).group
            let userID = try context.parameters.require("user")
            switch try await store.addMember(group, userID: userID, actor: "admin-key:\(key.id)", at: now()) {
            case .noSuchUser: throw AdminError.notFound("user \(userID)")
            case .changed, .unchanged: return Self.noticed(Response(status: .noContent), group)
            }
        }
        router.delete(RouterPath(base + "/{id}/members/{user}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .usersManage)
            let group = try await find(context, tenant: tenant).group
            let userID = try context.parameters.require("user")
            switch try await store.removeMember(group, userID: userID, actor: "admin-key:\(key.id)", at: now()) {
            case .noSuchUser: throw AdminError.notFound("user \(userID)")
            case .unchanged: throw AdminError.notFound("user \(userID) in group \(group.id)")
            case .changed: return Self.noticed(Response(status: .noContent), group)
            }
        }
        router.get("/admin/v1/tenants/{tenant}/users/{id}/groups") { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .usersRead)
            let id = try context.parameters.require("id")
            guard let user = try await store.user(id: id, tenantID: tenant.id) else { throw AdminError.notFound("user \(id)") }
            // Every group of the user in one page, by name, in the shape of every list.
            return try JSON.response(Page(items: try await store.groups(userID: user.id), nextCursor: nil))
        }
    }

    /// Now, to the millisecond the database keeps: the answer to a write shows the times a later
    /// read does.
    private func stamp() -> Date {
        Date(timeIntervalSince1970: (now().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    /// `response`, saying that the next sync may undo the change when another source keeps the group.
    static func noticed(_ response: Response, _ group: UserGroup) -> Response {
        guard group.source != .local else { return response }
        var response = response
        let keeper = group.source == .directory ? "the tenant's directory" : "a SCIM provisioning client"
        response.headers[syncNotice] = "group \(group.id) is kept by \(keeper); its next sync may undo this change"
        return response
    }

    /// `?source=`: `local`, `scim` or `directory`, given once.
    static func source(_ request: Request) throws(APIError) -> User.Source? {
        let values = request.uri.queryParameters.getAll("source")
        guard values.count <= 1 else { throw .badRequest("query parameter source is given more than once") }
        guard let value = values.first else { return nil }
        guard let source = User.Source(rawValue: String(value)) else {
            throw .badRequest("source must be local, scim or directory")
        }
        return source
    }

    private func find(_ context: CountersignRequestContext, tenant: Tenant) async throws -> GroupRecord {
        let id = try context.parameters.require("id")
        guard let group = try await store.group(id: id, tenantID: tenant.id) else { throw AdminError.notFound("group \(id)") }
        return group
    }
}
