import Foundation

/// The console's storage: roles, and the admin keys console sessions act with.
protocol ConsoleStore: Sendable {
    func role(userID: String) async throws -> ConsoleRoleGrant?
    func grant(_ grant: ConsoleRoleGrant, actor: String) async throws
    /// Removes the user's role; false when they had none.
    func revokeRole(userID: String, tenantID: String, actor: String, at date: Date) async throws -> Bool
    /// Issues the admin key of a console session; the secret is returned once.
    func issueSessionKey(for grant: ConsoleRoleGrant, username: String, at date: Date) async throws -> (AdminKey, String)
    /// Revokes a console session's key (at sign-out).
    func revokeSessionKey(id: String, at date: Date) async throws
    /// Revokes the keys of console sessions begun before `date`, which no session can use any more.
    func revokeSessionKeys(issuedBefore date: Date, at now: Date) async throws
}

struct SQLConsoleStore: ConsoleStore {
    let database: any Database
    let keys: any AdminKeyRepository
    /// Issues keys the way the bootstrap and the administration API do.
    let authenticator: AdminAuthenticator
    let audit: AuditLog

    /// `created_by` of every console session's key, so they can be told from keys people made.
    static let sessionKeyCreator = "console"

    func role(userID: String) async throws -> ConsoleRoleGrant? {
        try await database.first(
            "SELECT \(raw: ConsoleRoleGrant.columns) FROM console_roles WHERE user_id = \(userID)", as: ConsoleRoleGrant.self)
    }

    func grant(_ grant: ConsoleRoleGrant, actor: String) async throws {
        try await database.transaction { executor in
            try await executor.run("DELETE FROM console_roles WHERE user_id = \(grant.userID)")
            try await executor.run(
                """
                INSERT INTO console_roles (user_id, tenant_id, role, granted_by, granted_at)
                VALUES (\(grant.userID), \(grant.tenantID), \(grant.role.rawValue), \(grant.grantedBy), \(grant.grantedAt))
                """)
            try await audit.record(
                "user.console_role_granted", actor: actor, tenantID: grant.tenantID, target: ("user", grant.userID),
                details: ["role": grant.role.rawValue], at: grant.grantedAt, on: executor)
        }
    }

    func revokeRole(userID: String, tenantID: String, actor: String, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            let removed = try await executor.run(
                "DELETE FROM console_roles WHERE user_id = \(userID) AND tenant_id = \(tenantID) RETURNING user_id")
            guard !removed.isEmpty else { return false }
            try await audit.record(
                "user.console_role_revoked", actor: actor, tenantID: tenantID, target: ("user", userID), at: date,
                on: executor)
            return true
        }
    }

    func issueSessionKey(for grant: ConsoleRoleGrant, username: String, at date: Date) async throws -> (AdminKey, String) {
        try await database.transaction { executor in
            let (key, secret) = try await authenticator.issue(
                tenantID: grant.role == .systemAdmin ? nil : grant.tenantID, name: "Console session of \(username)",
                rights: grant.role.rights, createdBy: Self.sessionKeyCreator, at: date, on: executor)
            try await audit.record(
                "console.signed_in", actor: "user:\(grant.userID)", tenantID: grant.tenantID, target: ("admin_key", key.id),
                details: ["role": grant.role.rawValue, "user_id": grant.userID], at: date, on: executor)
            return (key, secret)
        }
    }

    func revokeSessionKey(id: String, at date: Date) async throws {
        _ = try await database.transaction { executor in try await keys.revoke(id: id, at: date, on: executor) }
    }

    func revokeSessionKeys(issuedBefore date: Date, at now: Date) async throws {
        try await keys.revoke(createdBy: Self.sessionKeyCreator, issuedBefore: date, at: now, on: database)
    }
}
