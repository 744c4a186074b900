import Foundation
import Logging
import Synchronization
// The SQLite library SQLiteNIO builds (its C API, with prefixed names).
import VaporCSQLite

/// The embedded database: one SQLite file in WAL mode, one connection.
///
/// Statements run under a lock that serialises them and keeps transactions isolated without
/// `SQLITE_BUSY` retries, in the calling task: they take microseconds, and handing each to
/// another thread and back would cost more than running it. Prepared statements are kept and
/// reused, keyed by their text.
///
/// **Group commit.** A commit is durable before its caller hears of it, but commits do not wait
/// for the disk one by one. SQLite commits into the write-ahead log without flushing it
/// (`synchronous = NORMAL`) and releases the lock; the caller then waits for `WALFlusher`, which
/// flushes the log (`fdatasync`) on a thread of its own once for every commit made since its
/// last flush. While one flush runs, the next transactions proceed, and one flush then covers
/// them all. A failed flush fails every commit it covers. (SQLite's own checkpoints flush the
/// log and the database file as they always do.)
public final class SQLiteDatabase: Database {
    public let dialect = SQLDialect.sqlite
    private let connection: Connection
    private let lock = AsyncLock()
    /// nil for an in-memory database, which has nothing to flush.
    private let flusher: WALFlusher?

    /// Opens (creating if needed) the database at `path`, or an in-memory one for `nil`.
    public static func open(path: String?, logger: Logger) async throws -> SQLiteDatabase {
        let connection = try Connection(path: path ?? ":memory:")
        if path != nil {
            let mode = try connection.run("PRAGMA journal_mode = WAL", [])
            guard mode.first?["journal_mode"] == .text("wal") else {
                throw StorageError.unavailable("SQLite could not switch \(path ?? "") to write-ahead logging")
            }
        }
        // Commits write the log without flushing it; WALFlusher flushes before any commit is
        // reported. Checkpoints still flush (NORMAL), so the database file is never torn.
        _ = try connection.run("PRAGMA synchronous = NORMAL", [])
        _ = try connection.run("PRAGMA foreign_keys = ON", [])
        _ = try connection.run("PRAGMA busy_timeout = 5000", [])
        return SQLiteDatabase(connection: connection, flusher: path.map { WALFlusher(logPath: $0 + "-wal") })
    }

    private init(connection: Connection, flusher: WALFlusher?) {
        self.connection = connection
        self.flusher = flusher
    }

    @discardableResult
    public func run(_ statement: SQLStatement) async throws -> [SQLRow] {
        // A write outside a transaction commits by itself, and is flushed like any commit.
        let (rows, wrote) = try await lock.withLock {
            let readOnly = try self.connection.isReadOnly(statement.text)
            return (try self.connection.run(statement.text, statement.binds), !readOnly)
        }
        if wrote { try await flusher?.flush() }
        return rows
    }

    /// Outside a transaction each statement commits as it runs: the action runs at once.
    public func afterCommit(_ action: @escaping @Sendable () -> Void) {
        action()
    }

    public func transaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLExecutor) async throws -> Result
    ) async throws -> Result {
        let committed = AfterCommitActions()
        let result = try await lock.withLock {
            _ = try self.connection.run("BEGIN IMMEDIATE", [])
            do {
                let result = try await body(TransactionExecutor(connection: self.connection, committed: committed))
                _ = try self.connection.run("COMMIT", [])
                return result
            } catch {
                _ = try? self.connection.run("ROLLBACK", [])
                throw error
            }
        }
        try await flusher?.flush()
        // Once the commit is on disk: a reader told of it finds what was written.
        committed.run()
        return result
    }

    public func listen(
        channel: String, listening: @escaping @Sendable () -> Void, _ handler: @escaping @Sendable (String) async -> Void
    ) async throws {
        throw StorageError.unavailable("SQLite serves a single node and has no notification channel")
    }

    public func ping() async -> Bool {
        (try? await run("SELECT 1 AS one")) != nil
    }

    /// The memory of the connection's page cache (`SQLITE_DBSTATUS_CACHE_USED`), read under the
    /// lock (the connection is opened without SQLite's own mutex).
    public func pageCacheBytes() async -> Int64? {
        (try? await lock.withLock { self.connection.pageCacheBytes() }) ?? nil
    }

    /// How many times SQLite has parsed and planned the kept statement `text` again since it
    /// was prepared (`SQLITE_STMTSTATUS_REPREPARE`); nil while it is not kept.
    func reprepareCount(of text: String) async throws -> Int? {
        try await lock.withLock { self.connection.reprepareCount(of: text) }
    }

    public func close() async {
        try? await flusher?.flush()
        try? await lock.withLock { self.connection.close() }
    }

    /// The executor handed to a transaction body: statements run under the lock the
    /// transaction already holds.
    private struct TransactionExecutor: SQLExecutor {
        let connection: Connection
        let committed: AfterCommitActions
        var dialect: SQLDialect { .sqlite }

        func run(_ statement: SQLStatement) async throws -> [SQLRow] {
            try connection.run(statement.text, statement.binds)
        }

        func afterCommit(_ action: @escaping @Sendable () -> Void) {
            committed.add(action)
        }
    }
}

/// Flushes the write-ahead log to stable storage for every commit made before `flush()` was
/// called, with one `fdatasync` for all the commits that arrive while the previous one runs.
final class WALFlusher: Sendable {
    private struct State {
        /// Tickets handed out, one per `flush()` call, each taken after its commit returned.
        var issued = 0
        var running = false
        var waiting: [(ticket: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    private let logPath: String
    private let state = Mutex(State())
    private let thread = DispatchQueue(label: "countersign.sqlite.flush")

    init(logPath: String) {
        self.logPath = logPath
    }

    /// Returns once everything committed before the call is on disk.
    func flush() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let start = state.withLock { state -> Bool in
                state.issued += 1
                state.waiting.append((state.issued, continuation))
                guard !state.running else { return false }
                state.running = true
                return true
            }
            if start { thread.async { self.drain() } }
        }
    }

    /// Flushes until no caller is left waiting.
    private func drain() {
        while true {
            let target = state.withLock { $0.issued }
            let outcome = Result { try syncLog() }
            // Every ticket up to `target` was issued after its commit: this flush covers it.
            let done = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
                let covered = state.waiting.filter { $0.ticket <= target }.map(\.continuation)
                state.waiting.removeAll { $0.ticket <= target }
                if state.waiting.isEmpty { state.running = false }
                return covered
            }
            for continuation in done { continuation.resume(with: outcome) }
            guard state.withLock({ $0.running }) else { return }
        }
    }

    private func syncLog() throws {
        let descriptor = Foundation.open(logPath, O_RDONLY | O_CLOEXEC)
        // No log file: SQLite has checkpointed and removed it, so every commit is in the
        // database file, which the checkpoint flushed.
        guard descriptor >= 0 else {
            if errno == ENOENT { return }
            throw StorageError.unavailable("cannot open \(logPath) to flush it: errno \(errno)")
        }
        defer { Foundation.close(descriptor) }
        guard fdatasync(descriptor) == 0 else {
            throw StorageError.unavailable("flushing \(logPath) failed: errno \(errno)")
        }
    }
}

/// A failure SQLite reported, with its extended result code and message.
public struct SQLiteFailure: Error, CustomStringConvertible {
    public let code: Int32
    public let message: String

    public var description: String { "SQLite error \(code): \(message)" }
}

/// One `sqlite3` handle and its prepared statements. Not thread-safe by itself: every call is
/// made under `SQLiteDatabase`'s lock, so the handle is used by one thread at a time.
private final class Connection: @unchecked Sendable {
    /// Statements kept prepared; beyond this many distinct texts, the rest are prepared per use.
    static let statementCacheLimit = 256
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    init(path: String) throws {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite_nio_sqlite3_close_v2(handle)
            self.handle = nil
            throw SQLiteFailure(code: status, message: message)
        }
        sqlite_nio_sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        close()
    }

    func close() {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle { sqlite_nio_sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Whether `sql` only reads (and so never waits for a flush).
    func isReadOnly(_ sql: String) throws -> Bool {
        guard let handle else { throw StorageError.unavailable("the SQLite database is closed") }
        let (statement, cached) = try prepared(sql, handle: handle)
        defer { if !cached { sqlite_nio_sqlite3_finalize(statement) } }
        return sqlite_nio_sqlite3_stmt_readonly(statement) != 0
    }

    func run(_ sql: String, _ binds: [SQLValue]) throws -> [SQLRow] {
        guard let handle else { throw StorageError.unavailable("the SQLite database is closed") }
        let (statement, cached) = try prepared(sql, handle: handle)
        // A kept statement is reset but its bindings are not cleared: every run binds every
        // parameter anew, and `sqlite3_clear_bindings` expires any statement whose plan looked
        // at a bound value (an equality filter on a column outside the index it uses, a LIMIT),
        // which SQLite then parses and plans again at the next step.
        defer {
            if cached {
                sqlite_nio_sqlite3_reset(statement)
            } else {
                sqlite_nio_sqlite3_finalize(statement)
            }
        }
        // Parameters given no value are NULL, as on a statement prepared afresh (one value too
        // many is SQLite's range error, below).
        let parameters = sqlite_nio_sqlite3_bind_parameter_count(statement)
        if parameters > binds.count {
            for index in Int32(binds.count + 1)...parameters { sqlite_nio_sqlite3_bind_null(statement, index) }
        }
        for (offset, value) in binds.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32 = switch value {
            case .null:
                sqlite_nio_sqlite3_bind_null(statement, index)
            case .integer(let number):
                sqlite_nio_sqlite3_bind_int64(statement, index, number)
            case .text(let text):
                sqlite_nio_sqlite3_bind_text64(
                    statement, index, text, UInt64(text.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
            case .blob(let data):
                data.withUnsafeBytes { bytes in
                    sqlite_nio_sqlite3_bind_blob64(statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                                   UInt64(bytes.count), Self.transient)
                }
            }
            guard status == SQLITE_OK else { throw failure(handle, status) }
        }
        let columnCount = sqlite_nio_sqlite3_column_count(statement)
        var columns: SQLRow.Columns?
        var rows: [SQLRow] = []
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw failure(handle, status) }
            // Named once per result, after the first step (a statement SQLite re-prepared for a
            // changed schema names its columns anew).
            let shared = columns ?? SQLRow.Columns(
                (0..<columnCount).map { String(cString: sqlite_nio_sqlite3_column_name(statement, $0)) })
            columns = shared
            rows.append(SQLRow(columns: shared, cells: (0..<columnCount).map { Self.value(statement, $0) }))
        }
        return rows
    }

    func pageCacheBytes() -> Int64? {
        guard let handle else { return nil }
        var current: Int32 = 0
        var highest: Int32 = 0
        guard sqlite_nio_sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0) == SQLITE_OK else {
            return nil
        }
        return Int64(current)
    }

    func reprepareCount(of sql: String) -> Int? {
        statements[sql].map { Int(sqlite_nio_sqlite3_stmt_status($0, Int32(SQLITE_STMTSTATUS_REPREPARE), 0)) }
    }

    private func prepared(_ sql: String, handle: OpaquePointer) throws -> (OpaquePointer, cached: Bool) {
        if let statement = statements[sql] { return (statement, true) }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else {
            sqlite_nio_sqlite3_finalize(statement)
            throw failure(handle, status)
        }
        guard statements.count < Self.statementCacheLimit else { return (statement, false) }
        statements[sql] = statement
        return (statement, true)
    }

    private static func value(_ statement: OpaquePointer, _ column: Int32) -> SQLValue {
        switch sqlite_nio_sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite_nio_sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT:
            return .integer(Int64(sqlite_nio_sqlite3_column_double(statement, column)))
        case SQLITE_TEXT:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            guard let text = sqlite_nio_sqlite3_column_text(statement, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            guard count > 0, let blob = sqlite_nio_sqlite3_column_blob(statement, column) else { return .blob(Data()) }
            return .blob(Data(bytes: blob, count: count))
        default:
            return .null
        }
    }

    /// The error for `status`; unique and primary-key violations become `uniqueViolation`.
    private func failure(_ handle: OpaquePointer, _ status: Int32) -> any Error {
        let code = sqlite_nio_sqlite3_extended_errcode(handle)
        // SQLITE_CONSTRAINT_UNIQUE and SQLITE_CONSTRAINT_PRIMARYKEY (macros Swift does not import).
        if code == SQLITE_CONSTRAINT | 8 << 8 || code == SQLITE_CONSTRAINT | 6 << 8 {
            return StorageError.uniqueViolation
        }
        return SQLiteFailure(code: code, message: String(cString: sqlite_nio_sqlite3_errmsg(handle)))
    }
}
