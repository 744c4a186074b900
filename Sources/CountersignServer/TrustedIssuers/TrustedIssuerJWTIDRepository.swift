import Foundation

/// The used `jti`s of trusted issuers' tokens, in `trusted_issuer_jwt_ids`: each token enrolls
/// one phone. Keyed by the issuer's `iss`, not by the trusted-issuer record nor the tenant: a
/// `jti` names one token of its issuer (RFC 7519 §4.1.7), so a token stays spent when its issuer
/// is deleted and trusted again, and when two tenants trust the same provider. (The clients'
/// ledger, `client_jwt_ids`, cannot hold these: its rows belong to registered clients.)
protocol TrustedIssuerJWTIDRepository: Sendable {
    /// Records `jti` as used by `issuer` until `until` unless a live record holds it, in one
    /// conditional statement, so that two enrollments racing with one token cannot both
    /// succeed; true when recorded. A record that expired before `date` is taken over.
    func record(_ jti: String, issuer: String, until: Date, at date: Date, on executor: any SQLExecutor) async throws
        -> Bool
    /// Forgets the identifiers of `issuer` that expired before `date`.
    func purge(issuer: String, before date: Date, on executor: any SQLExecutor) async throws
}

struct SQLTrustedIssuerJWTIDRepository: TrustedIssuerJWTIDRepository {
    func record(_ jti: String, issuer: String, until: Date, at date: Date, on executor: any SQLExecutor) async throws
        -> Bool {
        !(try await executor.run(
            """
            INSERT INTO trusted_issuer_jwt_ids (issuer, jti, expires_at) VALUES (\(issuer), \(jti), \(until))
            ON CONFLICT (issuer, jti) DO UPDATE SET expires_at = excluded.expires_at
            WHERE trusted_issuer_jwt_ids.expires_at < \(date)
            RETURNING jti
            """)).isEmpty
    }

    func purge(issuer: String, before date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM trusted_issuer_jwt_ids WHERE issuer = \(issuer) AND expires_at < \(date)")
    }
}
