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
        try await executor.run(
            """
            INSERT INTO refresh_token_families (id, tenant_id, client_id, user_id, scope, auth_time, acr, amr, created_at,
                expires_at, revoked_at, authorization_details)
            VALUES (\(family.id), \(family.tenantID), \(family.clientID), \(family.userID), \(family.scope.joined(separator: " ")), \(family.authTime), \(family.acr), \(family.amr.joined(separator: " ")), \(family.createdAt), \(family.expiresAt), \(family.revokedAt), \(family.authorizationDetails?.json.canonicalString))
            """)
    }

    func insert(_ token: RefreshToken, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO refresh_tokens (id, family_id, token_hash, issued_at, expires_at, access_token_id,
                access_token_expires_at, used_at, revoked_at)
            VALUES (\(token.id), \(token.familyID), \(token.tokenHash), \(token.issuedAt), \(token.expiresAt), \(token.accessTokenID), \(token.accessTokenExpiresAt), \(token.usedAt), \(token.revokedAt))
            """)
    }

    func find(tokenHash: Data, on executor: any SQLExecutor) async throws -> (token: RefreshToken, family: RefreshTokenFamily)? {
        guard let row = try await executor.run(
            """
            SELECT \(raw: Self.tokenColumns), \(raw: Self.familyColumns)
            FROM refresh_tokens t JOIN refresh_token_families f ON f.id = t.family_id WHERE t.token_hash = \(tokenHash)
            """).first else { return nil }
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
        return !(try await executor.run(
            "SELECT id FROM refresh_token_families WHERE id = \(id) AND revoked_at IS NULL\(raw: lock)")).isEmpty
    }

    func markUsed(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            "UPDATE refresh_tokens SET used_at = \(date) WHERE id = \(id) AND used_at IS NULL AND revoked_at IS NULL RETURNING id")).isEmpty
    }

    func revokeFamily(id: String, tenantID: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        // The family's row first: it is the lock a concurrent rotation waits on.
        guard !(try await executor.run(
            "UPDATE refresh_token_families SET revoked_at = \(date) WHERE id = \(id) AND revoked_at IS NULL RETURNING id")).isEmpty else { return false }
        try await executor.run(
            "UPDATE refresh_tokens SET revoked_at = \(date) WHERE family_id = \(id) AND revoked_at IS NULL")
        // RFC 7009 §2.1: the access tokens of the same grant go too.
        try await executor.run(
            """
            INSERT INTO revoked_access_tokens (jti, tenant_id, expires_at, revoked_at)
            SELECT access_token_id, \(tenantID), access_token_expires_at, \(date) FROM refresh_tokens
            WHERE family_id = \(id) AND access_token_expires_at > \(date)
            ON CONFLICT (jti) DO NOTHING
            """)
        return true
    }

    func purge(expiredBefore date: Date, on executor: any SQLExecutor) async throws -> Int {
        try await executor.run(
            "DELETE FROM refresh_tokens WHERE family_id IN (SELECT id FROM refresh_token_families WHERE expires_at < \(date))")
        return try await executor.run(
            "DELETE FROM refresh_token_families WHERE expires_at < \(date) RETURNING id").count
    }

    private static func words(_ text: String) -> [String] {
        text.split(separator: " ").map(String.init)
    }
}
