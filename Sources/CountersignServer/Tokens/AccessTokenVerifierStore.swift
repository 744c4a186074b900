import Foundation

/// What checking an access token (`AccessTokenVerifier`) reads beyond the token itself: whether
/// it was revoked, and its user.
protocol AccessTokenVerifierStore: Sendable {
    /// Whether the access token `jti` of the tenant was revoked (`TokenRevocation`).
    func isRevoked(jti: String, tenantID: String) async throws -> Bool
    /// The user, if it still exists in the tenant.
    func user(id: String, tenantID: String) async throws -> User?
}

/// The access token check's store on the server's database (SQLite or PostgreSQL).
struct SQLAccessTokenVerifierStore: AccessTokenVerifierStore {
    let database: any Database
    let users: any UserRepository
    var revokedAccessTokens: any RevokedAccessTokenRepository = SQLRevokedAccessTokenRepository()

    func isRevoked(jti: String, tenantID: String) async throws -> Bool {
        try await revokedAccessTokens.isRevoked(jti: jti, tenantID: tenantID, on: database)
    }

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }
}
