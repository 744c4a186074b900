import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/authentication-policy`: read and replace a tenant's
/// `AuthenticationPolicy`, and `…/users/{id}/request-suppression`: lift the pause a user's
/// "I did not request this" started, once the tenant has looked into it.
struct PolicyAdminRoutes: Sendable {
    let services: ServerServices
    let guardian: AdminGuard

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/authentication-policy"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .authenticationPolicyManage)
            return try JSON.response(tenant.policy)
        }
        router.put(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .authenticationPolicyManage)
            let policy = try await request.decodeJSON(AuthenticationPolicy.self, limit: services.configuration.maximumBodySize)
                .validated()
            let date = services.now()
            try await services.database.transaction { executor in
                try await services.repositories.tenants.setPolicy(tenantID: tenant.id, policy, at: date, on: executor)
                try await services.audit.record(
                    "tenant.authentication_policy_set", actor: "admin-key:\(key.id)", tenantID: tenant.id,
                    target: ("tenant", tenant.id), details: Self.summary(policy), at: date, on: executor)
            }
            services.tenantService.forget()
            return try JSON.response(policy)
        }
        router.delete("/admin/v1/tenants/{tenant}/users/{id}/request-suppression") { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .usersManage)
            let id = try context.parameters.require("id")
            guard try await services.repositories.users.find(id: id, tenantID: tenant.id, on: services.database) != nil else {
                throw AdminError.notFound("user \(id)")
            }
            let date = services.now()
            try await services.database.transaction { executor in
                try await services.repositories.users.liftSuppression(userID: id, on: executor)
                try await services.audit.record(
                    "user.request_suppression_lifted", actor: "admin-key:\(key.id)", tenantID: tenant.id,
                    target: ("user", id), at: date, on: executor)
            }
            return Response(status: .noContent)
        }
    }

    private static func summary(_ policy: AuthenticationPolicy) -> [String: String] {
        var details = [
            "pin_attempt_limit": String(policy.pinAttemptLimit),
            "user_requests_per_minute": String(policy.userRequestsPerMinute),
            "client_requests_per_minute": String(policy.clientRequestsPerMinute),
            "not_requested_suppression_seconds": String(policy.notRequestedSuppressionSeconds),
        ]
        details["default_acr"] = policy.defaultAcr
        details["minimum_acr"] = policy.minimumAcr
        return details
    }
}
