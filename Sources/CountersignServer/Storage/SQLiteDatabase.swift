import Foundation
import Logging
import NIOCore
import SQLiteNIO

/// The embedded database: one SQLite file in WAL mode. A single connection serves every
/// statement, serialised by a lock, which keeps transactions isolated without `SQLITE_BUSY`
/// retries; SQLite's own write throughput on one file is the bound either way.
public final class SQLiteDatabase: Database {
    public let dialect = SQLDialect.sqlite
    private let connection: SQLiteConnection
    private let lock = AsyncLock()

    /// Opens (creating if needed) the database at `path`, or an in-memory one for `nil`.
    public static func open(path: String?, logger: Logger) async throws -> SQLiteDatabase {
        let storage: SQLiteConnection.Storage = path.map { .file(path: $0) } ?? .memory
        let connection = try await SQLiteConnection.open(storage: storage, logger: logger)
        let database = SQLiteDatabase(connection: connection)
        if path != nil {
            _ = try await connection.query("PRAGMA journal_mode = WAL", [])
        }
        // FULL: a committed transaction survives power loss, in WAL mode too.
        _ = try await connection.query("PRAGMA synchronous = FULL", [])
        _ = try await connection.query("PRAGMA foreign_keys = ON", [])
        _ = try await connection.query("PRAGMA busy_timeout = 5000", [])
        return database
    }

    private init(connection: SQLiteConnection) {
        self.connection = connection
    }

    @discardableResult
    public func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        try await lock.withLock { try await self.run(sql, binds) }
    }

    public func transaction<Result: Sendable>(
        _ body: @Sendable (any SQLExecutor) async throws -> Result
    ) async throws -> Result {
        try await lock.withLock {
            _ = try await self.run("BEGIN IMMEDIATE", [])
            do {
                let result = try await body(TransactionExecutor(database: self))
                _ = try await self.run("COMMIT", [])
                return result
            } catch {
                _ = try? await self.run("ROLLBACK", [])
                throw error
            }
        }
    }

    public func listen(channel: String, _ handler: @escaping @Sendable (String) async -> Void) async throws {
        throw StorageError.unavailable("SQLite serves a single node and has no notification channel")
    }

    public func ping() async -> Bool {
        (try? await query("SELECT 1 AS one", [])) != nil
    }

    public func close() async {
        try? await connection.close()
    }

    fileprivate func run(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        let sqliteBinds: [SQLiteData] = binds.map { value in
            switch value {
            case .null: .null
            case .integer(let number): .integer(SQLiteInt64(number))
            case .text(let text): .text(text)
            case .blob(let data): .blob(ByteBuffer(bytes: data))
            }
        }
        let rows: [SQLiteRow]
        do {
            rows = try await connection.query(sql, sqliteBinds)
        } catch let error as SQLiteError {
            if [.constraintUniqueFailed, .constraintPrimaryKeyFailed].contains(error.reason)
                || (error.reason == .constraint && error.message.contains("UNIQUE")) {
                throw StorageError.uniqueViolation
            }
            throw error
        }
        return rows.map { row in
            var values: [String: SQLValue] = [:]
            for column in row.columns {
                switch column.data {
                case .null: values[column.name] = .null
                case .integer(let number): values[column.name] = .integer(Int64(number))
                case .float(let number): values[column.name] = .integer(Int64(number))
                case .text(let text): values[column.name] = .text(text)
                case .blob(let buffer): values[column.name] = .blob(Data(buffer.readableBytesView))
                }
            }
            return SQLRow(values: values)
        }
    }

    /// The executor handed to a transaction body: statements run under the lock the
    /// transaction already holds.
    private struct TransactionExecutor: SQLExecutor {
        let database: SQLiteDatabase
        var dialect: SQLDialect { .sqlite }

        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
            try await database.run(sql, binds)
        }
    }
}
