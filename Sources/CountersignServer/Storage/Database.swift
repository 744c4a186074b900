import Foundation
import Synchronization

/// The SQL engine behind a `Database`. Statements are written once for both (`SQLStatement`'s
/// `$n` placeholders read the same on each); only a few clauses differ (`FOR UPDATE`, advisory
/// locks) and a column type in the schema (`SchemaStatement`).
public enum SQLDialect: String, Sendable {
    case sqlite
    case postgres
}

/// Runs statements. Inside a transaction the executor is bound to that transaction.
public protocol SQLExecutor: Sendable {
    var dialect: SQLDialect { get }

    /// Runs one statement and returns its rows (empty for statements without a result).
    @discardableResult
    func run(_ statement: SQLStatement) async throws -> [SQLRow]

    /// Runs `action` once what was written through this executor is committed: after `COMMIT`
    /// inside a transaction (and never if it rolls back), at once outside one, where each
    /// statement commits as it runs. For telling this process of a change that others must not
    /// hear of before they can read it (a live stream's notice). The action runs on the task
    /// that committed, so it must be quick and must not throw.
    func afterCommit(_ action: @escaping @Sendable () -> Void)
}

/// The actions a transaction runs once it commits (`SQLExecutor.afterCommit`), in the order they
/// were added.
final class AfterCommitActions: Sendable {
    private let actions = Mutex<[@Sendable () -> Void]>([])

    func add(_ action: @escaping @Sendable () -> Void) {
        actions.withLock { $0.append(action) }
    }

    /// Runs the actions, once: called after `COMMIT` only.
    func run() {
        let due = actions.withLock { actions in
            defer { actions = [] }
            return actions
        }
        for action in due { action() }
    }
}

extension SQLExecutor {
    /// Every row, decoded as `Row` (its coding keys are the column names).
    public func all<Row: Decodable>(_ statement: SQLStatement, as type: Row.Type) async throws -> [Row] {
        try await run(statement).map { (row) throws(StorageError) in try row.decode(type) }
    }

    /// The first row decoded as `Row`, or nil when there is none.
    public func first<Row: Decodable>(_ statement: SQLStatement, as type: Row.Type) async throws -> Row? {
        try await run(statement).first?.decode(type)
    }

    /// The first row's `column`, or nil when there is no row.
    public func first<Value: Decodable>(_ statement: SQLStatement, column: String, as type: Value.Type) async throws -> Value? {
        try await run(statement).first?.decode(column: column, as: type)
    }

    /// `column` of every row.
    public func all<Value: Decodable>(_ statement: SQLStatement, column: String, as type: Value.Type) async throws -> [Value] {
        try await run(statement).map { (row) throws(StorageError) in try row.decode(column: column, as: type) }
    }

    /// Runs one statement per part of `ids` (at most 500 each: engines bound the number of
    /// parameters) and returns every part's rows; `statement` makes the statement for a part,
    /// which it interpolates as `\(list: part)`. Nothing runs for no ids.
    @discardableResult
    public func run(chunking ids: [String], _ statement: (ArraySlice<String>) -> SQLStatement) async throws -> [SQLRow] {
        var rows: [SQLRow] = []
        for start in stride(from: 0, to: ids.count, by: 500) {
            rows += try await run(statement(ids[start..<min(start + 500, ids.count)]))
        }
        return rows
    }
}

/// A database: SQLite in the data directory, or PostgreSQL. Repositories are written against
/// this protocol only, so every repository runs on both engines with the same statements.
public protocol Database: SQLExecutor {
    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> Result) async throws -> Result

    /// Calls `handler` with the payload of every notification sent on `channel` (by any node,
    /// this one included) until the task is cancelled or the connection fails; `listening` is
    /// called once the channel is listened to, before any notification. PostgreSQL
    /// LISTEN/NOTIFY; SQLite, which serves one node, has no such channel and throws.
    func listen(
        channel: String, listening: @escaping @Sendable () -> Void, _ handler: @escaping @Sendable (String) async -> Void
    ) async throws

    /// Whether the database answers (for `/readyz`).
    func ping() async -> Bool

    /// Memory the engine's page cache holds in this process, for `/metrics`: SQLite's; nil for
    /// PostgreSQL, whose cache lives in its own server.
    func pageCacheBytes() async -> Int64?

    /// How the engine's statements are kept prepared, for `/metrics`: PostgreSQL's named
    /// statements; nil for SQLite, which keeps every statement it has run.
    func statementNames() async -> KeptStatementCounts?

    /// Closes every connection.
    func close() async
}

extension Database {
    public func pageCacheBytes() async -> Int64? { nil }
    public func statementNames() async -> KeptStatementCounts? { nil }
}

/// The statements a PostgreSQL node keeps prepared under a name, and those it has had to send
/// unnamed because `KeptStatementNames.limit` were kept already.
public struct KeptStatementCounts: Sendable, Equatable {
    /// Distinct statements (text and value types) holding a name now.
    public var kept: Int
    /// Statements sent unnamed since the start, each parsed and planned again by PostgreSQL.
    public var unnamedRuns: Int
}
