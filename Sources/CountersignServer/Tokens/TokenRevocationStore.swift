import Foundation

/// What the revocation endpoint (`TokenRevocation`) reads and writes: the refresh token
/// presented with its family, the revocation of that family (`RefreshTokenFamilyRevocation`),
/// and the record of a revoked access token.
protocol TokenRevocationStore: RefreshTokenFamilyRevocationStore {
    /// The token whose value hashes to `tokenHash`, with its family.
    func refreshToken(hash tokenHash: Data) async throws -> (token: RefreshToken, family: RefreshTokenFamily)?
    /// Records the access token `token` of the tenant revoked until it expires and writes the
    /// audit record, in one transaction; an access token revoked already is not recorded twice.
    func revokeAccessToken(_ token: VerifiedAccessToken, tenantID: String, byClient clientID: String, at date: Date)
        async throws
}

/// The revocation endpoint's store on the server's database (SQLite or PostgreSQL).
struct SQLTokenRevocationStore: TokenRevocationStore {
    let database: any Database
    let audit: AuditLog
    var refreshTokens: any RefreshTokenRepository = SQLRefreshTokenRepository()
    var revokedAccessTokens: any RevokedAccessTokenRepository = SQLRevokedAccessTokenRepository()

    func refreshToken(hash tokenHash: Data) async throws -> (token: RefreshToken, family: RefreshTokenFamily)? {
        try await refreshTokens.find(tokenHash: tokenHash, on: database)
    }

    func revoke(_ family: RefreshTokenFamily, cause: RefreshTokenFamilyRevocation.Cause, byClient clientID: String,
                at date: Date) async throws {
        try await SQLRefreshTokenFamilyRevocationStore(database: database, audit: audit, refreshTokens: refreshTokens)
            .revoke(family, cause: cause, byClient: clientID, at: date)
    }

    func revokeAccessToken(_ token: VerifiedAccessToken, tenantID: String, byClient clientID: String, at date: Date)
        async throws {
        try await database.transaction { executor in
            guard try await revokedAccessTokens.revoke(
                jti: token.id, tenantID: tenantID,
                expiresAt: Date(timeIntervalSince1970: TimeInterval(token.expiresAt)), at: date, on: executor) else { return }
            try await audit.record(
                "access_token.revoked", actor: "client:\(clientID)", tenantID: tenantID,
                target: ("access_token", token.id), details: ["user_id": token.userID], at: date, on: executor)
        }
    }
}
