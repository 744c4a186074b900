import Foundation

/// A user's code as stored, with the count of wrong codes that may lock it.
struct StoredUserCode: Sendable {
    let hash: Data
    let lockedUntil: Date?
}

/// The user-code columns of `users` (the code itself is `CIBA/UserCode`): only what the
/// `user_code` check and the administration API need.
protocol UserCodeRepository: Sendable {
    /// Sets (or with nil removes) the code, clearing the count of wrong codes and any lock.
    func set(userID: String, hash: Data?, on executor: any SQLExecutor) async throws
    func find(userID: String, on executor: any SQLExecutor) async throws -> StoredUserCode?
    /// Counts a wrong code; at `limit` in a row the code is locked until `lockUntil`. Returns
    /// the lock's end when this failure set it.
    func recordFailure(userID: String, limit: Int, lockUntil: Date, on executor: any SQLExecutor) async throws -> Date?
    func resetFailures(userID: String, on executor: any SQLExecutor) async throws
}

struct SQLUserCodeRepository: UserCodeRepository {
    func set(userID: String, hash: Data?, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE users SET user_code_hash = \(hash), user_code_failures = 0, user_code_locked_until = NULL
            WHERE id = \(userID)
            """)
    }

    /// The user-code columns of a row of `users`.
    private struct Row: Decodable {
        /// NULL when the user has no code.
        var hash: Data?
        var lockedUntil: Date?

        enum CodingKeys: String, CodingKey {
            case hash = "user_code_hash"
            case lockedUntil = "user_code_locked_until"
        }
    }

    func find(userID: String, on executor: any SQLExecutor) async throws -> StoredUserCode? {
        guard let row = try await executor.first(
            "SELECT user_code_hash, user_code_locked_until FROM users WHERE id = \(userID)", as: Row.self),
            let hash = row.hash else { return nil }
        return StoredUserCode(hash: hash, lockedUntil: row.lockedUntil)
    }

    func recordFailure(userID: String, limit: Int, lockUntil: Date, on executor: any SQLExecutor) async throws -> Date? {
        guard let failures = try await executor.first(
            """
            UPDATE users SET user_code_failures = user_code_failures + 1 WHERE id = \(userID)
            RETURNING user_code_failures
            """, column: "user_code_failures", as: Int.self), failures >= limit else { return nil }
        try await executor.run(
            "UPDATE users SET user_code_failures = 0, user_code_locked_until = \(lockUntil) WHERE id = \(userID)")
        return lockUntil
    }

    func resetFailures(userID: String, on executor: any SQLExecutor) async throws {
        try await executor.run(
            "UPDATE users SET user_code_failures = 0 WHERE id = \(userID) AND user_code_failures <> 0")
    }
}
