import Foundation

/// Ends a refresh token family: the family, every token of it, and the unexpired access tokens
/// issued with them, recorded in the tenant's audit log. Two causes: the client asked
/// (`POST /revoke`), or a used token came back, which means that two parties hold tokens of
/// the grant and the server cannot tell which is the client (RFC 9700, the OAuth 2.0 Security
/// Best Current Practice, §4.14): all of them stop working, and the user must approve again.
struct RefreshTokenFamilyRevocation: Sendable {
    enum Cause: String, Sendable {
        case revocationRequest = "revocation_request"
        case reuse = "reuse"

        var action: String {
            switch self {
            case .revocationRequest: "refresh_token.revoked"
            case .reuse: "refresh_token.reused"
            }
        }
    }

    let database: any Database
    let audit: AuditLog
    var refreshTokens: any RefreshTokenRepository = SQLRefreshTokenRepository()

    /// Revokes `family` within the transaction of `executor`; a family revoked already is left
    /// as it is and not recorded twice.
    func revoke(_ family: RefreshTokenFamily, cause: Cause, client: Client, at date: Date,
                on executor: any SQLExecutor) async throws {
        guard try await refreshTokens.revokeFamily(id: family.id, tenantID: family.tenantID, at: date, on: executor) else {
            return
        }
        try await audit.record(
            cause.action, actor: "client:\(client.id)", tenantID: family.tenantID, target: ("refresh_token_family", family.id),
            details: ["user_id": family.userID, "client_id": family.clientID, "cause": cause.rawValue], at: date, on: executor)
    }

    /// The same in a transaction of its own.
    func revoke(_ family: RefreshTokenFamily, cause: Cause, client: Client, at date: Date) async throws {
        try await database.transaction { executor in
            try await revoke(family, cause: cause, client: client, at: date, on: executor)
        }
    }
}
