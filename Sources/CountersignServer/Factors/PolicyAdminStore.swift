import Foundation

/// What the policy routes (`PolicyAdminRoutes`) read and write, and nothing else: a tenant's
/// authentication policy and a user's pause after "I did not request this". Each write is one
/// transaction with its audit.
protocol PolicyAdminStore: Sendable {
    /// Replaces the tenant's policy; the tenants this node remembers are forgotten after, so the
    /// next request is held to the new one.
    func setPolicy(_ policy: AuthenticationPolicy, tenantID: String, actor: String, at date: Date) async throws
    /// Whether the user exists in the tenant.
    func userExists(id: String, tenantID: String) async throws -> Bool
    /// Lets the user's requests through again.
    func liftSuppression(userID: String, tenantID: String, actor: String, at date: Date) async throws
    /// The ids of the groups `references` name (`GroupReferences`).
    func resolveGroups(_ references: [String], tenantID: String, field: String) async throws -> [String]
}

/// The policy routes' store on the server's database (SQLite or PostgreSQL).
struct SQLPolicyAdminStore: PolicyAdminStore {
    let database: any Database
    let tenants: any TenantRepository
    let users: any UserRepository
    let audit: AuditLog

    func resolveGroups(_ references: [String], tenantID: String, field: String) async throws -> [String] {
        try await GroupReferences.resolve(references, tenantID: tenantID, field: field, on: database)
    }
    /// Holds the cache a changed policy must clear.
    let tenantService: TenantService

    func setPolicy(_ policy: AuthenticationPolicy, tenantID: String, actor: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await tenants.setPolicy(tenantID: tenantID, policy, at: date, on: executor)
            try await audit.record(
                "tenant.authentication_policy_set", actor: actor, tenantID: tenantID,
                target: ("tenant", tenantID), details: Self.summary(policy), at: date, on: executor)
        }
        tenantService.forget()
    }

    func userExists(id: String, tenantID: String) async throws -> Bool {
        try await users.find(id: id, tenantID: tenantID, on: database) != nil
    }

    func liftSuppression(userID: String, tenantID: String, actor: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await users.liftSuppression(userID: userID, on: executor)
            try await audit.record(
                "user.request_suppression_lifted", actor: actor, tenantID: tenantID,
                target: ("user", userID), at: date, on: executor)
        }
    }

    /// The policy's numbers and classes as the audit log records them.
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
