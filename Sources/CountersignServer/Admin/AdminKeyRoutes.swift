import Foundation
import Hummingbird

/// Admin keys: `/admin/v1/admin-keys` for system keys, `/admin/v1/tenants/{tenant}/admin-keys`
/// for a tenant's. A key grants only rights it holds, and `tenants:manage` only to system keys.
struct AdminKeyRoutes: Sendable {
    let store: any AdminKeyStore
    let guardian: AdminGuard
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    struct CreateKey: Decodable {
        var name: String
        var rights: [String]
    }

    struct CreatedKey: Encodable, Sendable {
        let adminKey: AdminKey
        /// Shown once; only its hash is stored.
        let secret: String
        enum CodingKeys: String, CodingKey {
            case secret
            case adminKey = "admin_key"
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        router.get("/admin/v1/admin-keys") { request, _ in
            _ = try await guardian.systemKey(request, holding: .adminKeysManage)
            return try await list(request, tenantID: nil)
        }
        router.post("/admin/v1/admin-keys") { request, _ in
            let key = try await guardian.systemKey(request, holding: .adminKeysManage)
            return try await create(request, by: key, tenantID: nil)
        }
        router.delete("/admin/v1/admin-keys/{id}") { request, context in
            let key = try await guardian.systemKey(request, holding: .adminKeysManage)
            return try await revoke(try context.parameters.require("id"), by: key, tenantID: nil)
        }
        router.get("/admin/v1/tenants/{tenant}/admin-keys") { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .adminKeysManage)
            return try await list(request, tenantID: tenant.id)
        }
        router.post("/admin/v1/tenants/{tenant}/admin-keys") { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .adminKeysManage)
            return try await create(request, by: key, tenantID: tenant.id)
        }
        router.delete("/admin/v1/tenants/{tenant}/admin-keys/{id}") { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .adminKeysManage)
            return try await revoke(try context.parameters.require("id"), by: key, tenantID: tenant.id)
        }
    }

    private func list(_ request: Request, tenantID: String?) async throws -> Response {
        let page = try PageRequest(request)
        let keys = try await store.keys(tenantID: tenantID, after: page.cursor, limit: page.fetchLimit)
        return try JSON.response(page.page(keys, cursor: \.id))
    }

    private func create(_ request: Request, by creator: AdminKey, tenantID: String?) async throws -> Response {
        let body = try await request.decodeJSON(CreateKey.self, limit: maximumBodySize)
        let name = try AdminFields.name(body.name)
        guard !body.rights.isEmpty else { throw AdminError.invalidField("rights", "at least one right is required") }
        var rights: [AdminRight] = []
        for raw in body.rights {
            guard let right = AdminRight(rawValue: raw) else {
                throw AdminError.invalidField(
                    "rights", "\"\(raw)\" is not a right; rights are \(AdminRight.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard creator.holds(right) else { throw AdminError.cannotGrant(right) }
            if right == .tenantsManage && tenantID != nil {
                throw AdminError.invalidField("rights", "tenants:manage can only be held by a system key")
            }
            rights.append(right)
        }
        let (key, secret) = try await store.issue(
            tenantID: tenantID, name: name, rights: rights, createdBy: "admin-key:\(creator.id)", at: now())
        return try JSON.response(CreatedKey(adminKey: key, secret: secret), status: .created)
    }

    private func revoke(_ id: String, by revoker: AdminKey, tenantID: String?) async throws -> Response {
        guard let key = try await store.key(id: id), key.tenantID == tenantID else {
            throw AdminError.notFound("admin key \(id)")
        }
        // Revoking is held to the same rule as granting: a key cannot take away a key that can
        // do more than it can (the bootstrap key, say).
        if let right = key.rights.first(where: { !revoker.holds($0) }) { throw AdminError.cannotRevoke(right) }
        guard try await store.revoke(id: id, tenantID: tenantID, actor: "admin-key:\(revoker.id)", at: now()) else {
            throw AdminError.conflict("admin key \(id) is already revoked")
        }
        return Response(status: .noContent)
    }
}
