import Foundation

/// What the client routes (`ClientAdminRoutes`) read and write, and nothing else. Each write is
/// one transaction with its audit; a client's secret is only ever handed over as its hash.
protocol ClientAdminStore: Sendable {
    /// The tenant's clients after `cursor`, by id.
    func clients(tenantID: String, after cursor: String?, limit: Int) async throws -> [Client]
    /// The client, if it belongs to the tenant.
    func client(id: String, tenantID: String) async throws -> Client?
    /// Registers the client, as of its `createdAt`.
    func create(_ client: Client, secretHash: Data, actor: String) async throws
    /// Stores the changed client, as of its `updatedAt`, and replaces its secret when `secretHash` is given.
    func update(_ client: Client, replacingSecretWith secretHash: Data?, actor: String) async throws
    /// Replaces the client's secret, as of its `updatedAt`.
    func rotateSecret(of client: Client, to secretHash: Data, actor: String) async throws
    func delete(_ client: Client, actor: String, at date: Date) async throws
    /// Whether the tenant has a directory, which `directory_password` needs.
    func hasDirectory(tenantID: String) async throws -> Bool
    /// The ids of the groups `references` name (`GroupReferences`).
    func resolveGroups(_ references: [String], tenantID: String, field: String) async throws -> [String]
}

/// The client routes' store on the server's database (SQLite or PostgreSQL).
struct SQLClientAdminStore: ClientAdminStore {
    let database: any Database
    let clients: any ClientRepository
    let audit: AuditLog

    func clients(tenantID: String, after cursor: String?, limit: Int) async throws -> [Client] {
        try await clients.list(tenantID: tenantID, after: cursor, limit: limit, on: database)
    }

    func client(id: String, tenantID: String) async throws -> Client? {
        try await clients.find(id: id, tenantID: tenantID, on: database)
    }

    func hasDirectory(tenantID: String) async throws -> Bool {
        try await DirectoryPresence.configured(tenantID: tenantID, on: database)
    }

    func resolveGroups(_ references: [String], tenantID: String, field: String) async throws -> [String] {
        try await GroupReferences.resolve(references, tenantID: tenantID, field: field, on: database)
    }

    func create(_ client: Client, secretHash: Data, actor: String) async throws {
        try await database.transaction { executor in
            try await clients.insert(client, secretHash: secretHash, on: executor)
            try await audit.record(
                "client.created", actor: actor, tenantID: client.tenantID, target: ("client", client.id),
                details: ["name": client.name, "token_delivery_mode": client.deliveryMode.rawValue,
                          "token_endpoint_auth_method": client.authenticationMethod.rawValue],
                at: client.createdAt, on: executor)
        }
    }

    func update(_ client: Client, replacingSecretWith secretHash: Data?, actor: String) async throws {
        try await database.transaction { executor in
            try await clients.update(client, on: executor)
            if let secretHash {
                try await clients.replaceSecret(id: client.id, secretHash: secretHash, at: client.updatedAt, on: executor)
            }
            try await audit.record(
                "client.updated", actor: actor, tenantID: client.tenantID, target: ("client", client.id),
                at: client.updatedAt, on: executor)
        }
    }

    func rotateSecret(of client: Client, to secretHash: Data, actor: String) async throws {
        try await database.transaction { executor in
            try await clients.replaceSecret(id: client.id, secretHash: secretHash, at: client.updatedAt, on: executor)
            try await audit.record(
                "client.secret_rotated", actor: actor, tenantID: client.tenantID, target: ("client", client.id),
                at: client.updatedAt, on: executor)
        }
    }

    func delete(_ client: Client, actor: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await clients.delete(id: client.id, on: executor)
            try await audit.record(
                "client.deleted", actor: actor, tenantID: client.tenantID, target: ("client", client.id),
                at: date, on: executor)
        }
    }
}
