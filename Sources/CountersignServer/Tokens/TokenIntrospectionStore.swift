import Foundation

/// What introspection (`TokenIntrospection`) reads of a refresh token: the token with its
/// family, and the family's user. An access token is checked by `AccessTokenVerifier`.
protocol TokenIntrospectionStore: Sendable {
    /// The token whose value hashes to `tokenHash`, with its family.
    func refreshToken(hash tokenHash: Data) async throws -> (token: RefreshToken, family: RefreshTokenFamily)?
    /// The user, if it still exists in the tenant.
    func user(id: String, tenantID: String) async throws -> User?
}

/// Introspection's store on the server's database (SQLite or PostgreSQL).
struct SQLTokenIntrospectionStore: TokenIntrospectionStore {
    let database: any Database
    let users: any UserRepository
    var refreshTokens: any RefreshTokenRepository = SQLRefreshTokenRepository()

    func refreshToken(hash tokenHash: Data) async throws -> (token: RefreshToken, family: RefreshTokenFamily)? {
        try await refreshTokens.find(tokenHash: tokenHash, on: database)
    }

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }
}
