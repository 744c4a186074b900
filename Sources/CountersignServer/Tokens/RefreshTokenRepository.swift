import Foundation

/// The storage refresh tokens need: families, their tokens, and the conditional updates that
/// let one use of a token succeed and every other count as a replay.
protocol RefreshTokenRepository: Sendable {
    func insert(_ family: RefreshTokenFamily, on executor: any SQLExecutor) async throws
    func insert(_ token: RefreshToken, on executor: any SQLExecutor) async throws
    /// The token whose value hashes to `tokenHash`, with its family.
    func find(tokenHash: Data, on executor: any SQLExecutor) async throws -> (token: RefreshToken, family: RefreshTokenFamily)?
    /// Whether the family is still unrevoked; on PostgreSQL its row stays locked until the
    /// transaction ends, so that a rotation and a revocation of one family take turns.
    func lockLiveFamily(id: String, on executor: any SQLExecutor) async throws -> Bool
    /// Marks the token used if it is neither used nor revoked; false if it was.
    func markUsed(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    /// Revokes the family, every token of it, and the unexpired access tokens issued with them;
    /// false if the family was revoked already.
    func revokeFamily(id: String, tenantID: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    /// Deletes the families that ended before `date`, with their tokens; returns how many.
    func purge(expiredBefore date: Date, on executor: any SQLExecutor) async throws -> Int
}

struct SQLRefreshTokenRepository: RefreshTokenRepository {
    private static let tokenColumns = """
        t.id, t.family_id, t.token_hash, t.issued_at, t.expires_at AS token_expires_at, t.access_token_id,
        t.access_token_expires_at, t.used_at, t.revoked_at AS token_revoked_at
        """
    private static let familyColumns = """
        f.tenant_id, f.client_id, f.user_id, f.scope, f.auth_time, f.acr, f.amr, f.created_at, f.expires_at, f.revoked_at,
        f.authorization_details
        """

    func insert(_ family: RefreshTokenFamily, on executor: any SQLExecutor) async throws {
        try await executor.query(
            """
            INSERT INTO refresh_token_families (id, tenant_id, client_id, user_id, scope, auth_time, acr, amr, created_at,
                expires_at, revoked_at, authorization_details)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(family.id), .text(family.tenantID), .text(family.clientID), .text(family.userID),
             .text(family.scope.joined(separator: " ")), SQLValue(family.authTime), .text(family.acr),
             .text(family.amr.joined(separator: " ")), SQLValue(family.createdAt), SQLValue(family.expiresAt),
             SQLValue(family.revokedAt), SQLValue(family.authorizationDetails?.json.canonicalString)])
    }

    func insert(_ token: RefreshToken, on executor: any SQLExecutor) async throws {
        try await executor.query(
            """
            INSERT INTO refresh_tokens (id, family_id, token_hash, issued_at, expires_at, access_token_id,
                access_token_expires_at, used_at, revoked_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(token.id), .text(token.familyID), .blob(token.tokenHash), SQLValue(token.issuedAt),
             SQLValue(token.expiresAt), .text(token.accessTokenID), SQLValue(token.accessTokenExpiresAt),
             SQLValue(token.usedAt), SQLValue(token.revokedAt)])
    }

    func find(tokenHash: Data, on executor: any SQLExecutor) async throws -> (token: RefreshToken, family: RefreshTokenFamily)? {
        guard let row = try await executor.first(
            """
            SELECT \(Self.tokenColumns), \(Self.familyColumns)
            FROM refresh_tokens t JOIN refresh_token_families f ON f.id = t.family_id WHERE t.token_hash = ?
            """,
            .blob(tokenHash)) else { return nil }
        let token = RefreshToken(
            id: try row.string("id"), familyID: try row.string("family_id"), tokenHash: try row.data("token_hash"),
            issuedAt: try row.date("issued_at"), expiresAt: try row.date("token_expires_at"),
            accessTokenID: try row.string("access_token_id"), accessTokenExpiresAt: try row.date("access_token_expires_at"),
            usedAt: try row.optionalDate("used_at"), revokedAt: try row.optionalDate("token_revoked_at"))
        let family = RefreshTokenFamily(
            id: token.familyID, tenantID: try row.string("tenant_id"), clientID: try row.string("client_id"),
            userID: try row.string("user_id"), scope: Self.words(try row.string("scope")),
            authTime: try row.date("auth_time"), acr: try row.string("acr"), amr: Self.words(try row.string("amr")),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
            revokedAt: try row.optionalDate("revoked_at"),
            authorizationDetails: try row.optionalString("authorization_details").map(AuthorizationDetails.init(stored:)))
        return (token, family)
    }

    func lockLiveFamily(id: String, on executor: any SQLExecutor) async throws -> Bool {
        // SQLite transactions begin IMMEDIATE and so already exclude every other writer.
        let lock = executor.dialect == .postgres ? " FOR UPDATE" : ""
        return !(try await executor.query(
            "SELECT id FROM refresh_token_families WHERE id = ? AND revoked_at IS NULL\(lock)", [.text(id)])).isEmpty
    }

    func markUsed(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.query(
            "UPDATE refresh_tokens SET used_at = ? WHERE id = ? AND used_at IS NULL AND revoked_at IS NULL RETURNING id",
            [SQLValue(date), .text(id)])).isEmpty
    }

    func revokeFamily(id: String, tenantID: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        // The family's row first: it is the lock a concurrent rotation waits on.
        guard !(try await executor.query(
            "UPDATE refresh_token_families SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING id",
            [SQLValue(date), .text(id)])).isEmpty else { return false }
        try await executor.query(
            "UPDATE refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL", [SQLValue(date), .text(id)])
        // RFC 7009 §2.1: the access tokens of the same grant go too.
        try await executor.query(
            """
            INSERT INTO revoked_access_tokens (jti, tenant_id, expires_at, revoked_at)
            SELECT access_token_id, ?, access_token_expires_at, ? FROM refresh_tokens
            WHERE family_id = ? AND access_token_expires_at > ?
            ON CONFLICT (jti) DO NOTHING
            """,
            [.text(tenantID), SQLValue(date), .text(id), SQLValue(date)])
        return true
    }

    func purge(expiredBefore date: Date, on executor: any SQLExecutor) async throws -> Int {
        try await executor.query(
            "DELETE FROM refresh_tokens WHERE family_id IN (SELECT id FROM refresh_token_families WHERE expires_at < ?)",
            [SQLValue(date)])
        return try await executor.query(
            "DELETE FROM refresh_token_families WHERE expires_at < ? RETURNING id", [SQLValue(date)]).count
    }

    private static func words(_ text: String) -> [String] {
        text.split(separator: " ").map(String.init)
    }
}
