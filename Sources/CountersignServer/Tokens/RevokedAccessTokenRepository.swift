import Foundation

/// The storage of access tokens revoked before their expiry. An access token is a signed JWT
/// that a resource server can check on its own; the server remembers a revoked one by its
/// `jti` until it expires, so that introspection and UserInfo refuse it.
protocol RevokedAccessTokenRepository: Sendable {
    /// Records the token as revoked until `expiresAt`; false if it was revoked already.
    func revoke(jti: String, tenantID: String, expiresAt: Date, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    func isRevoked(jti: String, tenantID: String, on executor: any SQLExecutor) async throws -> Bool
    /// Forgets the tokens that expired before `date`: they are refused for their expiry anyway.
    func purge(expiredBefore date: Date, on executor: any SQLExecutor) async throws
}

struct SQLRevokedAccessTokenRepository: RevokedAccessTokenRepository {
    func revoke(jti: String, tenantID: String, expiresAt: Date, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            INSERT INTO revoked_access_tokens (jti, tenant_id, expires_at, revoked_at)
            VALUES (\(jti), \(tenantID), \(expiresAt), \(date))
            ON CONFLICT (jti) DO NOTHING RETURNING jti
            """)).isEmpty
    }

    func isRevoked(jti: String, tenantID: String, on executor: any SQLExecutor) async throws -> Bool {
        try await executor.first(
            "SELECT jti FROM revoked_access_tokens WHERE jti = \(jti) AND tenant_id = \(tenantID)", column: "jti",
            as: String.self) != nil
    }

    func purge(expiredBefore date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM revoked_access_tokens WHERE expires_at < \(date)")
    }
}
