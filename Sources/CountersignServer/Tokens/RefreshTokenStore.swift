import Foundation

/// What the refresh grant (`RefreshTokenGrant`) reads and writes, and nothing else: the token
/// presented with its family, the family's user, the revocation of a family whose used token
/// came back (`RefreshTokenFamilyRevocation`), and the one rotation of a token to the next.
protocol RefreshTokenStore: RefreshTokenFamilyRevocationStore {
    /// The token whose value hashes to `tokenHash`, with its family.
    func refreshToken(hash tokenHash: Data) async throws -> (token: RefreshToken, family: RefreshTokenFamily)?
    /// The user, if it still exists in the tenant.
    func user(id: String, tenantID: String) async throws -> User?
    /// In one transaction: if `family` is still unrevoked (on PostgreSQL its row stays locked
    /// until the transaction ends, so that a rotation and a revocation of one family take turns),
    /// marks `token` used if it still is not and stores the tokens `issued` in its place; if it
    /// was used meanwhile, revokes the family for reuse with its audit record instead.
    func rotate(_ token: RefreshToken, of family: RefreshTokenFamily, to issued: IssuedTokens, byClient clientID: String,
                at date: Date) async throws -> RefreshTokenGrant.Outcome
}

/// The refresh grant's store on the server's database (SQLite or PostgreSQL).
struct SQLRefreshTokenStore: RefreshTokenStore {
    let database: any Database
    let users: any UserRepository
    let tokens: TokenIssuer
    let audit: AuditLog
    var refreshTokens: any RefreshTokenRepository = SQLRefreshTokenRepository()

    private var revocation: SQLRefreshTokenFamilyRevocationStore {
        SQLRefreshTokenFamilyRevocationStore(database: database, audit: audit, refreshTokens: refreshTokens)
    }

    func refreshToken(hash tokenHash: Data) async throws -> (token: RefreshToken, family: RefreshTokenFamily)? {
        try await refreshTokens.find(tokenHash: tokenHash, on: database)
    }

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func revoke(_ family: RefreshTokenFamily, cause: RefreshTokenFamilyRevocation.Cause, byClient clientID: String,
                at date: Date) async throws {
        try await revocation.revoke(family, cause: cause, byClient: clientID, at: date)
    }

    func rotate(_ token: RefreshToken, of family: RefreshTokenFamily, to issued: IssuedTokens, byClient clientID: String,
                at date: Date) async throws -> RefreshTokenGrant.Outcome {
        try await database.transaction { executor -> RefreshTokenGrant.Outcome in
            guard try await refreshTokens.lockLiveFamily(id: family.id, on: executor) else { return .revoked }
            guard try await refreshTokens.markUsed(id: token.id, at: date, on: executor) else {
                try await revocation.revoke(family, cause: .reuse, byClient: clientID, at: date, on: executor)
                return .reused
            }
            try await tokens.store(issued, on: executor)
            return .rotated
        }
    }
}
