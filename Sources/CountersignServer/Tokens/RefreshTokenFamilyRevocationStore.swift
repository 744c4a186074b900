import Foundation

/// What ending a refresh token family (`RefreshTokenFamilyRevocation`) writes: the revocation
/// and its audit record, together.
protocol RefreshTokenFamilyRevocationStore: Sendable {
    /// Revokes `family`, every token of it and the unexpired access tokens issued with them, and
    /// records it with its cause in the tenant's audit log, all in one transaction; a family
    /// revoked already is left as it is and not recorded twice.
    func revoke(_ family: RefreshTokenFamily, cause: RefreshTokenFamilyRevocation.Cause, byClient clientID: String,
                at date: Date) async throws
}

/// Family revocation on the server's database (SQLite or PostgreSQL). The refresh grant's and
/// the revocation endpoint's stores revoke through it, the grant also inside a transaction of
/// its own (`revoke(_:cause:byClient:at:on:)`).
struct SQLRefreshTokenFamilyRevocationStore: RefreshTokenFamilyRevocationStore {
    let database: any Database
    let audit: AuditLog
    var refreshTokens: any RefreshTokenRepository = SQLRefreshTokenRepository()

    func revoke(_ family: RefreshTokenFamily, cause: RefreshTokenFamilyRevocation.Cause, byClient clientID: String,
                at date: Date) async throws {
        try await database.transaction { executor in
            try await revoke(family, cause: cause, byClient: clientID, at: date, on: executor)
        }
    }

    /// The same within the transaction of `executor`.
    func revoke(_ family: RefreshTokenFamily, cause: RefreshTokenFamilyRevocation.Cause, byClient clientID: String,
                at date: Date, on executor: any SQLExecutor) async throws {
        guard try await refreshTokens.revokeFamily(id: family.id, tenantID: family.tenantID, at: date, on: executor) else {
            return
        }
        try await audit.record(
            cause.action, actor: "client:\(clientID)", tenantID: family.tenantID, target: ("refresh_token_family", family.id),
            details: ["user_id": family.userID, "client_id": family.clientID, "cause": cause.rawValue], at: date, on: executor)
    }
}
