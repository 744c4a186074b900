import CountersignCore
import Foundation
import Hummingbird

/// `/admin/v1/tenants`: system keys with `tenants:manage` create, list, rename and delete
/// tenants; any key of a tenant may read that tenant.
struct TenantAdminRoutes: Sendable {
    let store: any TenantAdminStore
    let guardian: AdminGuard
    /// Each tenant's issuer is shown under this server's public URL.
    let origin: PublicOrigin
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    struct CreateTenant: Decodable {
        var slug: String
        var displayName: String
        enum CodingKeys: String, CodingKey {
            case slug
            case displayName = "display_name"
        }
    }

    struct UpdateTenant: Decodable {
        var displayName: String?
        enum CodingKeys: String, CodingKey { case displayName = "display_name" }
    }

    struct TenantView: Encodable, Sendable {
        let id: String
        let slug: String
        let displayName: String
        let isDefault: Bool
        let issuer: String
        let deviceKeyThumbprint: String
        let createdAt: Date
        let updatedAt: Date

        init(_ tenant: Tenant, origin: PublicOrigin) {
            id = tenant.id
            slug = tenant.slug
            displayName = tenant.displayName
            isDefault = tenant.isDefault
            issuer = origin.tenantBase(tenant)
            deviceKeyThumbprint = tenant.signingKey.thumbprint
            createdAt = tenant.createdAt
            updatedAt = tenant.updatedAt
        }

        enum CodingKeys: String, CodingKey {
            case id, slug, issuer
            case displayName = "display_name"
            case isDefault = "is_default"
            case deviceKeyThumbprint = "device_key_thumbprint"
            case createdAt = "created_at"
            case updatedAt = "updated_at"
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let limit = maximumBodySize
        router.get("/admin/v1/tenants") { request, _ in
            _ = try await guardian.systemKey(request, holding: .tenantsManage)
            let page = try PageRequest(request)
            let tenants = try await store.tenants(after: page.cursor, limit: page.fetchLimit)
            return try JSON.response(page.page(tenants.map { TenantView($0, origin: origin) }, cursor: \.id))
        }
        router.post("/admin/v1/tenants") { request, _ in
            let key = try await guardian.systemKey(request, holding: .tenantsManage)
            let body = try await request.decodeJSON(CreateTenant.self, limit: limit)
            let slug = try TenantSlug(body.slug)
            let displayName = try AdminFields.name(body.displayName, field: "display_name")
            let tenant = try await store.create(
                slug: slug, displayName: displayName, actor: "admin-key:\(key.id)", at: now())
            return try JSON.response(TenantView(tenant, origin: origin), status: .created)
        }
        router.get("/admin/v1/tenants/{tenant}") { request, context in
            let key = try await guardian.key(request)
            let slug = try context.parameters.require("tenant")
            guard let tenant = try await store.tenant(slug: slug), key.reaches(tenantID: tenant.id) else {
                throw key.tenantID == nil ? AdminError.notFound("tenant \(slug)") : AdminError.wrongTenant
            }
            return try JSON.response(TenantView(tenant, origin: origin))
        }
        router.patch("/admin/v1/tenants/{tenant}") { request, context in
            try await rename(request, context)
        }
        router.delete("/admin/v1/tenants/{tenant}") { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .tenantsManage)
            guard key.tenantID == nil else { throw AdminError.wrongTenant }
            guard !tenant.isDefault else { throw AdminError.conflict("the default tenant cannot be deleted") }
            try await store.delete(tenant, actor: "admin-key:\(key.id)", at: now())
            return Response(status: .noContent)
        }
    }

    private func rename(_ request: Request, _ context: CountersignRequestContext) async throws -> Response {
        let (key, tenant) = try await guardian.tenant(request, context, holding: .tenantsManage)
        guard key.tenantID == nil else { throw AdminError.wrongTenant }
        let body = try await request.decodeJSON(UpdateTenant.self, limit: maximumBodySize)
        var updated = tenant
        if let name = try AdminFields.optionalName(body.displayName, field: "display_name") { updated.displayName = name }
        updated.updatedAt = now()
        try await store.rename(updated, actor: "admin-key:\(key.id)")
        return try JSON.response(TenantView(updated, origin: origin))
    }
}
