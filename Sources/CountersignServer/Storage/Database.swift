import Foundation

/// The SQL engine behind a `Database`. Statements are written once, with `?` placeholders and
/// the `BLOB` type; the PostgreSQL implementation rewrites both.
public enum SQLDialect: String, Sendable {
    case sqlite
    case postgres
}

/// Runs statements. Inside a transaction the executor is bound to that transaction.
public protocol SQLExecutor: Sendable {
    var dialect: SQLDialect { get }

    /// Runs one statement and returns its rows (empty for statements without a result).
    @discardableResult
    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow]
}

extension SQLExecutor {
    @discardableResult
    public func query(_ sql: String, _ binds: SQLValue...) async throws -> [SQLRow] {
        try await query(sql, binds)
    }

    /// The first row, or nil.
    public func first(_ sql: String, _ binds: SQLValue...) async throws -> SQLRow? {
        try await query(sql, binds).first
    }
}

/// A database: SQLite in the data directory, or PostgreSQL. Repositories are written against
/// this protocol only, so every repository runs on both engines with the same statements.
public protocol Database: SQLExecutor {
    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    func transaction<Result: Sendable>(_ body: @Sendable (any SQLExecutor) async throws -> Result) async throws -> Result

    /// Calls `handler` with the payload of every notification sent on `channel` (by any node,
    /// this one included) until the task is cancelled or the connection fails. PostgreSQL
    /// LISTEN/NOTIFY; SQLite, which serves one node, has no such channel and throws.
    func listen(channel: String, _ handler: @escaping @Sendable (String) async -> Void) async throws

    /// Whether the database answers (for `/readyz`).
    func ping() async -> Bool

    /// Closes every connection.
    func close() async
}
