import Foundation

/// What the admin-key routes (`AdminKeyRoutes`) read and write, and nothing else: a page of
/// keys, one key, a key issued and a key revoked, each write in one transaction with its audit.
protocol AdminKeyStore: Sendable {
    /// System keys (`tenantID` nil) or a tenant's, after `cursor`, by id.
    func keys(tenantID: String?, after cursor: String?, limit: Int) async throws -> [AdminKey]
    /// The key with this id, revoked or not.
    func key(id: String) async throws -> AdminKey?
    /// Issues a key; the returned secret is shown once and never stored.
    func issue(tenantID: String?, name: String, rights: [AdminRight], createdBy: String, at date: Date)
        async throws -> (AdminKey, secret: String)
    /// Revokes the key and records who did; false if it was revoked already.
    func revoke(id: String, tenantID: String?, actor: String, at date: Date) async throws -> Bool
}

/// The admin-key routes' store on the server's database (SQLite or PostgreSQL).
struct SQLAdminKeyStore: AdminKeyStore {
    let database: any Database
    let keys: any AdminKeyRepository
    /// Issues keys the way the bootstrap and the command line do, so every key is made one way.
    let authenticator: AdminAuthenticator
    let audit: AuditLog

    func keys(tenantID: String?, after cursor: String?, limit: Int) async throws -> [AdminKey] {
        try await keys.list(tenantID: tenantID, after: cursor, limit: limit, on: database)
    }

    func key(id: String) async throws -> AdminKey? {
        try await keys.find(id: id, on: database)?.0
    }

    func issue(tenantID: String?, name: String, rights: [AdminRight], createdBy: String, at date: Date)
        async throws -> (AdminKey, secret: String) {
        try await database.transaction { executor in
            try await authenticator.issue(
                tenantID: tenantID, name: name, rights: rights, createdBy: createdBy, at: date, on: executor)
        }
    }

    func revoke(id: String, tenantID: String?, actor: String, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            guard try await keys.revoke(id: id, at: date, on: executor) else { return false }
            try await audit.record(
                "admin_key.revoked", actor: actor, tenantID: tenantID, target: ("admin_key", id), at: date, on: executor)
            return true
        }
    }
}
