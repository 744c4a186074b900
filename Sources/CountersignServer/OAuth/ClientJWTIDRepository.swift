import Foundation

/// The used identifiers of clients' JWTs, in `client_jwt_ids`.
protocol ClientJWTIDRepository: Sendable {
    /// Inserts the identifier unless a live row holds it (one conditional statement, so two
    /// requests racing with one `jti` cannot both succeed); true when inserted. A row that has
    /// expired is taken over.
    func record(_ jti: String, clientID: String, purpose: String, until: Date, at now: Date,
                on executor: any SQLExecutor) async throws -> Bool
    func purge(before date: Date, on executor: any SQLExecutor) async throws
}

struct SQLClientJWTIDRepository: ClientJWTIDRepository {
    func record(_ jti: String, clientID: String, purpose: String, until: Date, at now: Date,
                on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            INSERT INTO client_jwt_ids (client_id, purpose, jti, expires_at)
            VALUES (\(clientID), \(purpose), \(jti), \(until))
            ON CONFLICT (client_id, purpose, jti) DO UPDATE SET expires_at = excluded.expires_at
            WHERE client_jwt_ids.expires_at < \(now)
            RETURNING jti
            """)).isEmpty
    }

    func purge(before date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM client_jwt_ids WHERE expires_at < \(date)")
    }
}
