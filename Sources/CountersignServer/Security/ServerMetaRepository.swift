import Foundation

/// The server's own records, in `server_meta`: one text value per key (the sealed master key
/// check, `SecretSealer.verifyAgainst`).
struct ServerMetaRepository: Sendable {
    func value(of key: String, on executor: any SQLExecutor) async throws -> String? {
        try await executor.first("SELECT value FROM server_meta WHERE key = \(key)", column: "value", as: String.self)
    }

    func insert(_ key: String, value: String, on executor: any SQLExecutor) async throws {
        try await executor.run("INSERT INTO server_meta (key, value) VALUES (\(key), \(value))")
    }
}
