import Foundation

/// What authenticating a relying party (`ClientAuthentication`) reads, and nothing else: the
/// client an id names within a tenant, with its secret's hash when it is checked by secret.
/// The `jti` of an assertion is the `JWTIDLedger`'s.
protocol ClientAuthenticationStore: Sendable {
    /// The client and its stored secret hash, if the tenant has a client of that id with a secret.
    func clientWithSecretHash(id: String, tenantID: String) async throws -> (client: Client, secretHash: Data)?
    /// The client, if the tenant has one of that id.
    func client(id: String, tenantID: String) async throws -> Client?
}

/// Client authentication's store on the server's database (SQLite or PostgreSQL).
struct SQLClientAuthenticationStore: ClientAuthenticationStore {
    let database: any Database
    let clients: any ClientRepository

    func clientWithSecretHash(id: String, tenantID: String) async throws -> (client: Client, secretHash: Data)? {
        try await clients.findWithSecretHash(id: id, tenantID: tenantID, on: database)
    }

    func client(id: String, tenantID: String) async throws -> Client? {
        try await clients.find(id: id, tenantID: tenantID, on: database)
    }
}
