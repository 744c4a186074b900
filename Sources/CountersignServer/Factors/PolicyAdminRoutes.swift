import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/authentication-policy`: read and replace a tenant's
/// `AuthenticationPolicy`, and `…/users/{id}/request-suppression`: lift the pause a user's
/// "I did not request this" started, once the tenant has looked into it.
struct PolicyAdminRoutes: Sendable {
    let store: any PolicyAdminStore
    let guardian: AdminGuard
    /// Where the server is reached: the RP ID of a tenant's passkeys unless it sets its own.
    let origin: PublicOrigin
    /// Whether the server loads FIDO metadata, whose roots stand in for a tenant's own.
    let metadata: Bool
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/authentication-policy"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .authenticationPolicyManage)
            return try JSON.response(tenant.policy)
        }
        router.put(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .authenticationPolicyManage)
            var policy = try await request.decodeJSON(AuthenticationPolicy.self, limit: maximumBodySize).validated(publicOrigin: origin.base, metadata: metadata)
            // Groups named by name or id, kept by id, each once. An id the stored policy holds
            // is kept though its group was deleted since (it applies to nobody): the policy read
            // with GET can always be put back.
            var floors: [GroupMinimum] = []
            for floor in policy.groupMinimums {
                let id = tenant.policy.groupMinimums.contains { $0.group == floor.group } ? floor.group
                    : try await store.resolveGroups([floor.group], tenantID: tenant.id, field: "group_minimum_acr")[0]
                guard !floors.contains(where: { $0.group == id }) else {
                    throw AdminError.invalidField("group_minimum_acr", "names the group \(floor.group) twice")
                }
                floors.append(GroupMinimum(group: id, minimumAcr: floor.minimumAcr))
            }
            policy.groupMinimums = floors
            var rules: [PasskeyGroupRule] = []
            for var rule in policy.passkeys.groupRules {
                rule.group = tenant.policy.passkeys.groupRules.contains { $0.group == rule.group } ? rule.group
                    : try await store.resolveGroups([rule.group], tenantID: tenant.id, field: "passkeys.group_rules")[0]
                guard !rules.contains(where: { $0.group == rule.group }) else {
                    throw AdminError.invalidField("passkeys.group_rules", "names the group \(rule.group) twice")
                }
                rules.append(rule)
            }
            policy.passkeys.groupRules = rules
            try await store.setPolicy(policy, tenantID: tenant.id, actor: "admin-key:\(key.id)", at: now())
            return try JSON.response(policy)
        }
        router.delete("/admin/v1/tenants/{tenant}/users/{id}/request-suppression") { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .usersManage)
            let id = try context.parameters.require("id")
            guard try await store.userExists(id: id, tenantID: tenant.id) else {
                throw AdminError.notFound("user \(id)")
            }
            try await store.liftSuppression(userID: id, tenantID: tenant.id, actor: "admin-key:\(key.id)", at: now())
            return Response(status: .noContent)
        }
    }
}
