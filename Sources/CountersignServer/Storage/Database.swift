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

    /// Runs a statement with an `IN (…)` list of `ids`, in chunks of at most 500 (engines
    /// bound the number of parameters), and returns every chunk's rows. `sql` is given the
    /// placeholder list (`?, ?, …`) of one chunk; `leading` are the binds that come before it.
    @discardableResult
    public func query(ids: [String], leading: [SQLValue] = [], _ sql: (String) -> String) async throws -> [SQLRow] {
        var rows: [SQLRow] = []
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = ids[start..<min(start + 500, ids.count)]
            rows += try await query(
                sql(Array(repeating: "?", count: chunk.count).joined(separator: ", ")), leading + chunk.map { SQLValue.text($0) })
        }
        return rows
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
