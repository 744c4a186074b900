import Foundation

/// What issuing and checking admin keys (`AdminAuthenticator`) reads and writes, and nothing
/// else: the keys with their secrets' hashes, when each was last used, and the audit record of
/// a key issued.
protocol AdminAuthenticatorStore: Sendable {
    /// Stores a new key with the hash of its secret and records it in the audit log, on the
    /// transaction of `executor`: a key is issued inside the caller's transaction (the first
    /// start's, the admin API's), so that it exists only if the rest of that work does.
    func recordIssued(_ key: AdminKey, secretHash: Data, on executor: any SQLExecutor) async throws
    /// The key of that id, revoked or not, and its secret's hash.
    func key(id: String) async throws -> (AdminKey, Data)?
    /// Records that the key was used at `date`.
    func recordUse(keyID: String, at date: Date) async throws
}

/// The admin authenticator's store on the server's database (SQLite or PostgreSQL).
struct SQLAdminAuthenticatorStore: AdminAuthenticatorStore {
    let database: any Database
    let keys: any AdminKeyRepository
    let audit: AuditLog

    func recordIssued(_ key: AdminKey, secretHash: Data, on executor: any SQLExecutor) async throws {
        try await keys.insert(key, secretHash: secretHash, on: executor)
        try await audit.record("admin_key.created", actor: key.createdBy ?? "system", tenantID: key.tenantID,
                               target: ("admin_key", key.id),
                               details: ["name": key.name, "rights": key.rights.map(\.rawValue).joined(separator: " ")],
                               at: key.createdAt, on: executor)
    }

    func key(id: String) async throws -> (AdminKey, Data)? {
        try await keys.find(id: id, on: database)
    }

    func recordUse(keyID: String, at date: Date) async throws {
        try await keys.touch(id: keyID, at: date, on: database)
    }
}
