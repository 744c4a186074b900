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
    let services: ServerServices
    let guardian: AdminGuard

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/authorization-detail-types"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .authenticationPolicyManage)
            return try JSON.response(tenant.authorizationDetailTypes)
        }
        router.put(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .authenticationPolicyManage)
            let body = try await request.bodyData(limit: services.configuration.maximumBodySize)
            let json: JSONValue
            do { json = try JSONValue(parsing: body) } catch let error as JSONParseError {
                throw AdminError.invalidField("types", "the body is not JSON (\(error.reason))")
            }
            let types = try AuthorizationDetailTypes(schema: json)
            let date = services.now()
            try await services.database.transaction { executor in
                try await services.repositories.tenants.setAuthorizationDetailTypes(
                    tenantID: tenant.id, types, at: date, on: executor)
                try await services.audit.record(
                    "tenant.authorization_detail_types_set", actor: "admin-key:\(key.id)", tenantID: tenant.id,
                    target: ("tenant", tenant.id), details: ["types": types.names.joined(separator: " ")],
                    at: date, on: executor)
            }
            services.tenantService.forget()
            return try JSON.response(types)
        }
    }
}
