import Foundation

/// What handing out token-signing keys (`TokenSigningKeys`) reads and writes, and nothing
/// else: each tenant's published keys, sealed, and their rotation.
protocol TokenSigningKeyStore: Sendable {
    /// The tenant's keys that are not retired, oldest first.
    func publishedKeys(tenantID: String) async throws -> [StoredTokenSigningKey]
    /// Every key the tenant has had, retired ones included, oldest first.
    func everyKey(tenantID: String) async throws -> [StoredTokenSigningKey]
    /// Rotates the tenant's keys in one transaction that holds the tenant's key-creation lock
    /// throughout (so that two nodes starting or rotating at once create one key, not two):
    /// reads the published keys under the lock, has `plan` say which keys to add and which to
    /// retire given them, stores the new keys (in `plan`'s order), retires the others as of
    /// `date`, and returns the keys published after, oldest first.
    func rotate(tenantID: String, at date: Date, plan: @escaping @Sendable ([StoredTokenSigningKey]) throws -> TokenSigningKeyRotation)
        async throws -> [StoredTokenSigningKey]
}

/// One rotation of a tenant's keys: the keys to add, and the ids of those to retire (among the
/// published ones and the new ones).
struct TokenSigningKeyRotation: Sendable {
    var added: [StoredTokenSigningKey]
    var retired: Set<String>
}

/// The token-signing keys' store on the server's database (SQLite or PostgreSQL).
struct SQLTokenSigningKeyStore: TokenSigningKeyStore {
    let database: any Database
    var repository: any TokenSigningKeyRepository = SQLTokenSigningKeyRepository()

    func publishedKeys(tenantID: String) async throws -> [StoredTokenSigningKey] {
        try await repository.published(tenantID: tenantID, on: database)
    }

    func everyKey(tenantID: String) async throws -> [StoredTokenSigningKey] {
        try await repository.all(tenantID: tenantID, on: database)
    }

    func rotate(tenantID: String, at date: Date, plan: @escaping @Sendable ([StoredTokenSigningKey]) throws -> TokenSigningKeyRotation)
        async throws -> [StoredTokenSigningKey] {
        try await database.transaction { executor in
            try await repository.lockForKeyCreation(tenantID: tenantID, on: executor)
            let published = try await repository.published(tenantID: tenantID, on: executor)
            let rotation = try plan(published)
            for key in rotation.added { try await repository.insert(key, on: executor) }
            for id in rotation.retired { try await repository.retire(id: id, at: date, on: executor) }
            return (published + rotation.added).filter { !rotation.retired.contains($0.id) }
        }
    }
}
