import CountersignCore
import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/authorization-detail-types`: read and replace the tenant's
/// registry of authorization detail types (RFC 9396). Held under `authentication-policy:manage`:
/// the registry decides what users are asked to approve and what their devices sign, as the
/// policy decides how.
///
/// Replacing the registry does not touch client registrations: a type removed here is refused
/// at `bc-authorize` as unknown until it is registered again.
struct AuthorizationDetailTypeAdminRoutes: Sendable {
    let store: any AuthorizationDetailTypeAdminStore
    let guardian: AdminGuard
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/authorization-detail-types"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .authenticationPolicyManage)
            return try JSON.response(tenant.authorizationDetailTypes)
        }
        router.put(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .authenticationPolicyManage)
            let body = try await request.bodyData(limit: maximumBodySize)
            let json: JSONValue
            do { json = try JSONValue(parsing: body) } catch let error as JSONParseError {
                throw AdminError.invalidField("types", "the body is not JSON (\(error.reason))")
            }
            let types = try AuthorizationDetailTypes(schema: json)
            try await store.setTypes(types, tenantID: tenant.id, actor: "admin-key:\(key.id)", at: now())
            return try JSON.response(types)
        }
    }
}
