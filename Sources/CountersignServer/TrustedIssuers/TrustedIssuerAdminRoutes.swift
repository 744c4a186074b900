import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/trusted-issuers`: the identity providers whose tokens enroll
/// phones for the tenant's users. Every call needs `tenants:manage`, reading included, so only
/// system keys reach them: an issuer trusted here can enroll a phone for any user of the tenant,
/// which is more than any tenant key may grant itself (a tenant key with `enrollments:create`
/// enrolls users one ticket at a time, each audited).
struct TrustedIssuerAdminRoutes: Sendable {
    let store: any TrustedIssuerAdminStore
    let guardian: AdminGuard
    let origin: PublicOrigin
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/trusted-issuers"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .tenantsManage)
            // At most `TrustedIssuer.maximumPerTenant`: always one page.
            return try JSON.response(Page(items: try await store.list(tenantID: tenant.id), nextCursor: nil))
        }
        router.post(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .tenantsManage)
            let fields = try await request.decodeJSON(TrustedIssuerFields.self, limit: maximumBodySize)
            let date = now()
            let issuer = try fields.created(
                id: Identifier.make("tis", at: date), tenantID: tenant.id, ownIssuers: origin.tenantBases(tenant), at: date)
            try await write(issuer) { try await store.create(issuer, limit: TrustedIssuer.maximumPerTenant, actor: "admin-key:\(key.id)") }
            return try JSON.response(try await stored(issuer), status: .created)
        }
        router.get(RouterPath(base + "/{id}")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .tenantsManage)
            return try JSON.response(try await find(context, tenant: tenant))
        }
        router.patch(RouterPath(base + "/{id}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .tenantsManage)
            let existing = try await find(context, tenant: tenant)
            let fields = try await request.decodeJSON(TrustedIssuerFields.self, limit: maximumBodySize)
            let issuer = try fields.applied(to: existing, ownIssuers: origin.tenantBases(tenant), at: now())
            try await write(issuer) { try await store.update(issuer, actor: "admin-key:\(key.id)") }
            return try JSON.response(try await stored(issuer))
        }
        router.delete(RouterPath(base + "/{id}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .tenantsManage)
            let id = try context.parameters.require("id")
            guard try await store.delete(id: id, tenantID: tenant.id, actor: "admin-key:\(key.id)", at: now()) != nil else {
                throw AdminError.notFound("trusted issuer \(id)")
            }
            return Response(status: .noContent)
        }
    }

    private func find(_ context: CountersignRequestContext, tenant: Tenant) async throws -> TrustedIssuer {
        let id = try context.parameters.require("id")
        guard let issuer = try await store.find(id: id, tenantID: tenant.id) else {
            throw AdminError.notFound("trusted issuer \(id)")
        }
        return issuer
    }

    /// The issuer as stored, with times to the millisecond, so that the answer to a write is
    /// what a later read shows.
    private func stored(_ issuer: TrustedIssuer) async throws -> TrustedIssuer {
        guard let stored = try await store.find(id: issuer.id, tenantID: issuer.tenantID) else {
            // Deleted by another call between the write and this read.
            throw AdminError.notFound("trusted issuer \(issuer.id)")
        }
        return stored
    }

    /// Runs a write and turns what stopped it into a 409.
    private func write(_ issuer: TrustedIssuer, _ body: () async throws -> TrustedIssuerWrite) async throws {
        let outcome: TrustedIssuerWrite
        do {
            outcome = try await body()
        } catch StorageError.uniqueViolation {
            // Two calls naming one iss at the same moment: the other one's stands.
            throw AdminError.conflict("the tenant already trusts the issuer \(issuer.issuer)")
        }
        switch outcome {
        case .stored: return
        case .limitReached:
            throw AdminError.conflict(
                "the tenant trusts \(TrustedIssuer.maximumPerTenant) issuers already, the most it may; delete one first")
        case .issuerTaken(let id):
            throw AdminError.conflict("the tenant already trusts the issuer \(issuer.issuer) (\(id))")
        }
    }
}
