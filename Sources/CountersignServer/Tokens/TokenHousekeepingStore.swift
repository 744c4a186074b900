import Foundation

/// What token housekeeping (`TokenHousekeeping`) deletes: refresh token families that ended,
/// and the records of revoked access tokens that expired.
protocol TokenHousekeepingStore: Sendable {
    /// Deletes the refresh token families that ended before `date`, with their tokens; returns
    /// how many.
    func forgetFamilies(endedBefore date: Date) async throws -> Int
    /// Forgets the revoked access tokens that expired before `date`: they are refused for their
    /// expiry anyway.
    func forgetRevokedAccessTokens(expiredBefore date: Date) async throws
}

/// Housekeeping's store on the server's database (SQLite or PostgreSQL).
struct SQLTokenHousekeepingStore: TokenHousekeepingStore {
    let database: any Database
    var refreshTokens: any RefreshTokenRepository = SQLRefreshTokenRepository()
    var revokedAccessTokens: any RevokedAccessTokenRepository = SQLRevokedAccessTokenRepository()

    func forgetFamilies(endedBefore date: Date) async throws -> Int {
        try await refreshTokens.purge(expiredBefore: date, on: database)
    }

    func forgetRevokedAccessTokens(expiredBefore date: Date) async throws {
        try await revokedAccessTokens.purge(expiredBefore: date, on: database)
    }
}
