import Foundation

/// The client repository with its reads outside a transaction served from `RecordCaches`: every
/// write here forgets the client, on this node at once and on every node once the write is
/// committed. Reads inside a transaction go to the database, since they may precede a write
/// that must see the stored row.
struct CachedClientRepository: ClientRepository {
    let base: any ClientRepository
    let relay: ClusterRelay

    private var cache: RecordCache<String, ClientRecord> { relay.caches.clients }

    func insert(_ client: Client, secretHash: Data, on executor: any SQLExecutor) async throws {
        try await base.insert(client, secretHash: secretHash, on: executor)
    }

    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> Client? {
        guard executor is any Database else { return try await base.find(id: id, tenantID: tenantID, on: executor) }
        return try await record(id: id, tenantID: tenantID, on: executor)?.client
    }

    func findWithSecretHash(id: String, tenantID: String, on executor: any SQLExecutor) async throws
        -> (client: Client, secretHash: Data)? {
        guard executor is any Database else {
            return try await base.findWithSecretHash(id: id, tenantID: tenantID, on: executor)
        }
        return try await record(id: id, tenantID: tenantID, on: executor).map { ($0.client, $0.secretHash) }
    }

    func list(tenantID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [Client] {
        try await base.list(tenantID: tenantID, after: cursor, limit: limit, on: executor)
    }

    func update(_ client: Client, on executor: any SQLExecutor) async throws {
        try await base.update(client, on: executor)
        try await relay.announceChanged(.client(client.id), on: executor)
    }

    func replaceSecret(id: String, secretHash: Data, at date: Date, on executor: any SQLExecutor) async throws {
        try await base.replaceSecret(id: id, secretHash: secretHash, at: date, on: executor)
        try await relay.announceChanged(.client(id), on: executor)
    }

    func delete(id: String, on executor: any SQLExecutor) async throws {
        try await base.delete(id: id, on: executor)
        try await relay.announceChanged(.client(id), on: executor)
    }

    func secretHash(id: String, on executor: any SQLExecutor) async throws -> Data? {
        try await base.secretHash(id: id, on: executor)
    }

    /// Client ids are unique across tenants; a cached client of another tenant is not this
    /// tenant's, exactly as the database would answer.
    private func record(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> ClientRecord? {
        if let cached = cache.value(for: id) { return cached.client.tenantID == tenantID ? cached : nil }
        let generation = cache.generation
        guard let found = try await base.findWithSecretHash(id: id, tenantID: tenantID, on: executor) else { return nil }
        let record = ClientRecord(client: found.client, secretHash: found.secretHash)
        cache.remember(record, for: id, readAt: generation)
        return record
    }
}
