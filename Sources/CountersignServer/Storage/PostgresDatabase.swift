import Foundation
import Synchronization
import Logging
import NIOCore
import PostgresNIO

/// PostgreSQL through a connection pool. Statements arrive as PostgreSQL reads them (`$n`
/// placeholders) and are sent as they are.
///
/// **Kept statements.** Each distinct statement (its text and the types of its values) is
/// given a name, up to `KeptStatementNames.limit` of them, and each connection prepares it
/// under that name the first time it runs it: later runs on that connection send only the
/// values, and PostgreSQL neither parses nor plans the statement again. Statements beyond the
/// limit are sent unnamed, parsed and planned each time.
public final class PostgresDatabase: Database {
    public let dialect = SQLDialect.postgres
    private let client: PostgresClient
    private let runTask: Task<Void, Never>
    private let deadlines = LeaseDeadlines()
    private let logger: Logger
    private let connectionWait: Duration
    private let names = KeptStatementNames()

    /// How long a statement waits for a pooled connection, unless configured otherwise. The
    /// driver alone keeps a request waiting while it retries for a minute (its circuit breaker)
    /// plus a connect timeout: during an outage every request would hang that long and then
    /// fail together. A few seconds is longer than any healthy wait and short enough for a
    /// client to get its 503 and retry.
    public static let defaultConnectionWait: Duration = .seconds(3)
    /// The bounds of `--database-connect-timeout`, in seconds.
    public static let connectionWaits = 1...60
    /// `/readyz` answers within about this long when the database is gone, so that a load
    /// balancer takes the node out at once rather than after the request wait.
    static let readinessWait: Duration = .seconds(1)
    /// How long the start waits for its first connection.
    static let startupWait: Duration = .seconds(30)

    /// Connections a node opens at most, unless configured otherwise.
    public static let defaultPoolSize = 20
    /// The bounds of `--database-pool-size`.
    public static let poolSizes = 4...500

    /// How long a connection stays open once idle; the next statement opens a new one.
    ///
    /// Every pool opens connections on demand, up to its size, and keeps none open below that
    /// (the driver's `minimumConnections` is 0). A minimum above 0 kills the process when the
    /// database comes back after an outage: the driver drops the connections that failed to
    /// reconnect, refills the minimum only at the pool's start, and traps in
    /// `createNewDemandConnectionIfPossible` (`precondition(minimumConcurrentConnections <=
    /// stats.active)`) at the first lease that needs a new connection (PostgresNIO 1.33.2; a
    /// server with 20 kept connections died at every PostgreSQL restart under concurrent load).
    ///
    /// The pool arms a `Task.sleep` timer each time a connection goes back to it idle, which holds
    /// its memory until its deadline even when a lease cancels it early; a short idle life keeps
    /// that memory to a few seconds' worth of releases (BENCHMARKS.md, "PostgreSQL's pool"). No
    /// keep-alive is needed besides: a connection idle longer than this is closed, so no
    /// firewall or NAT between the node and PostgreSQL can forget it while it is kept.
    public static let idleConnectionLifetime: Duration = .seconds(10)

    /// Connects to `url` (`postgres://user:password@host:port/database?sslmode=…&sslrootcert=…`;
    /// see `tlsMode`), opening at most `poolSize` connections at once, each when a statement
    /// needs it, and closing each after `idleLifetime` idle. A statement that has no connection
    /// after `connectionWait` fails with `StorageError.unavailable`, as does one whose connection
    /// is lost.
    public static func connect(
        url: String, poolSize: Int = defaultPoolSize, connectionWait: Duration = defaultConnectionWait,
        idleLifetime: Duration = idleConnectionLifetime, logger: Logger
    ) async throws -> PostgresDatabase {
        var configuration = try PostgresDatabase.configuration(from: url)
        configuration.options.maximumConnections = poolSize
        configuration.options.minimumConnections = 0
        configuration.options.connectionIdleTimeout = idleLifetime
        configuration.options.keepAliveBehavior = nil
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let database = PostgresDatabase(client: client, connectionWait: connectionWait, logger: logger)
        // Fail at start-up, with the driver's reason, rather than on the first request. A
        // database that is still starting, or a burst of nodes starting at once, may take
        // longer than a request would be kept waiting.
        do {
            _ = try await database.withConnection(waiting: max(connectionWait, startupWait)) { connection in
                try await database.run("SELECT 1 AS one", on: connection)
            }
        } catch {
            await database.close()
            throw StorageError.unavailable("cannot connect to PostgreSQL: \(String(reflecting: error))")
        }
        return database
    }

    static func configuration(from url: String) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url),
              ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = components.host, !host.isEmpty else {
            throw StorageError.unavailable("the database URL must look like postgres://user:password@host:5432/database")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        let tls = try tlsMode(components.queryItems ?? [])
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432,
            username: components.user?.removingPercentEncoding ?? "postgres",
            password: components.password?.removingPercentEncoding,
            database: database.isEmpty ? nil : database, tls: tls)
        configuration.options.maximumConnections = defaultPoolSize
        return configuration
    }

    /// `sslmode` as libpq reads it: `disable`; `allow`/`prefer` (the default) and `require`
    /// encrypt without checking the certificate — `require` checks the chain when `sslrootcert`
    /// is given, as libpq does; `verify-ca` checks the chain; `verify-full` the chain and the
    /// host name. `sslrootcert=/path/ca.pem` names the CA to trust instead of the system's.
    static func tlsMode(_ items: [URLQueryItem]) throws -> PostgresClient.Configuration.TLS {
        let mode = items.first(where: { $0.name == "sslmode" })?.value ?? "prefer"
        var tls = TLSConfiguration.makeClientConfiguration()
        let rootCertificate = items.first(where: { $0.name == "sslrootcert" })?.value
        if let rootCertificate { tls.trustRoots = .file(rootCertificate) }
        switch mode {
        case "disable":
            return .disable
        case "allow", "prefer":
            tls.certificateVerification = .none
            return .prefer(tls)
        case "require":
            tls.certificateVerification = rootCertificate == nil ? .none : .noHostnameVerification
            return .require(tls)
        case "verify-ca":
            tls.certificateVerification = .noHostnameVerification
            return .require(tls)
        case "verify-full":
            tls.certificateVerification = .fullVerification
            return .require(tls)
        default:
            throw StorageError.unavailable(
                "sslmode \(mode) is not one of disable, allow, prefer, require, verify-ca, verify-full")
        }
    }

    private init(client: PostgresClient, connectionWait: Duration, logger: Logger) {
        self.client = client
        self.connectionWait = connectionWait
        self.logger = logger
        self.runTask = Task { await client.run() }
        deadlines.start()
    }

    @discardableResult
    public func run(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await withConnection(waiting: connectionWait) { connection in
            try await self.run(statement, on: connection)
        }
    }

    /// Outside a transaction each statement commits as it runs: the action runs at once.
    public func afterCommit(_ action: @escaping @Sendable () -> Void) {
        action()
    }

    public func transaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLExecutor) async throws -> Result
    ) async throws -> Result {
        try await withConnection(waiting: connectionWait) { connection in
            _ = try await self.run("BEGIN", on: connection)
            let committed = AfterCommitActions()
            do {
                let result = try await body(TransactionExecutor(database: self, connection: connection, committed: committed))
                _ = try await self.run("COMMIT", on: connection)
                committed.run()
                return result
            } catch {
                _ = try? await self.run("ROLLBACK", on: connection)
                throw error
            }
        }
    }

    public func listen(
        channel: String, listening: @escaping @Sendable () -> Void, _ handler: @escaping @Sendable (String) async -> Void
    ) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                listening()
                for try await notification in notifications { await handler(notification.payload) }
            }
        }
    }

    /// Answers by `readinessWait` and a second at the latest, whatever the pool does: the probe
    /// runs in a task of its own that is not awaited past the deadline. Right after the server
    /// goes away, a lease can be handed a connection that is closing, whose statement the driver
    /// then drops unanswered (`withConnection` gives its caller up a second after the close, later
    /// than a probe may take); a readiness probe must say "not ready" at once instead.
    public func ping() async -> Bool {
        let verdict = PingVerdict()
        return await withCheckedContinuation { continuation in
            verdict.arm(continuation)
            let probe = Task {
                let answer = try? await self.withConnection(waiting: Self.readinessWait) { connection in
                    try await self.run("SELECT 1 AS one", on: connection)
                }
                verdict.give(answer != nil)
            }
            Task {
                try? await Task.sleep(for: Self.readinessWait + .seconds(1))
                verdict.give(false)
                probe.cancel()
            }
        }
    }

    /// The first verdict of a ping, given once to the waiting caller.
    private final class PingVerdict: Sendable {
        private let continuation = Mutex<CheckedContinuation<Bool, Never>?>(nil)

        func arm(_ waiting: CheckedContinuation<Bool, Never>) {
            continuation.withLock { $0 = waiting }
        }

        func give(_ ready: Bool) {
            continuation.withLock { waiting in
                waiting?.resume(returning: ready)
                waiting = nil
            }
        }
    }

    /// Runs `body` on a pooled connection, waiting at most `wait` for one. Losing the server,
    /// before or during `body`, becomes `StorageError.unavailable`, which the HTTP layer answers
    /// with 503 and `Retry-After` rather than with a fault of its own.
    ///
    /// The lease and `body` run in a task of their own, which the caller waits for but is not
    /// bound to: the driver drops a statement written to a connection that has just closed,
    /// and that statement never answers and ignores cancellation. A child task would hold its
    /// caller (a request, a dispatcher, a server's stop) for good; here the sweep of
    /// `LeaseDeadlines` gives the caller up once the connection has been closed for
    /// `LeaseDeadlines.lostConnectionGrace`, and the stranded task is left behind.
    func withConnection<Result: Sendable>(
        waiting wait: Duration, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let outcome = Outcome<Result>()
        let ticket = deadlines.begin(wait, onLostConnection: {
            outcome.give(.failure(StorageError.unavailable("the PostgreSQL connection was lost under a statement")))
        })
        defer { deadlines.end(ticket) }
        do {
            let work = Task {
                do {
                    try self.deadlines.attach(ticket)
                    let result: Result
                    do {
                        defer { self.deadlines.detach(ticket) }
                        result = try await self.client.withConnection { connection in
                            try self.deadlines.leased(ticket, connectionClosed: { connection.isClosed })
                            return try await body(connection)
                        }
                    }
                    outcome.give(.success(result))
                } catch {
                    outcome.give(.failure(error))
                }
            }
            return try await withTaskCancellationHandler {
                try await outcome.value()
            } onCancel: {
                work.cancel()
            }
        } catch let error as StorageError {
            throw error
        } catch let error as PSQLError where Self.meansConnectionLost(error) {
            throw StorageError.unavailable("the PostgreSQL connection was lost (\(error.code))")
        } catch where deadlines.expired(ticket) {
            throw StorageError.unavailable("no PostgreSQL connection within \(wait)")
        } catch let error where !deadlines.wasLeased(ticket) && !(error is CancellationError) {
            // Only the pool fails before a lease: its circuit breaker is open, or it is shut down.
            throw StorageError.unavailable("the PostgreSQL pool has no connection: \(String(describing: error))")
        }
    }

    /// The first result given, to the one caller waiting for it.
    private final class Outcome<Value: Sendable>: Sendable {
        private enum State {
            case pending(CheckedContinuation<Value, any Error>?)
            case given(Swift.Result<Value, any Error>)
            case taken
        }

        private let state = Mutex(State.pending(nil))

        func value() async throws -> Value {
            try await withCheckedThrowingContinuation { continuation in
                let given = state.withLock { state -> Swift.Result<Value, any Error>? in
                    guard case .given(let result) = state else {
                        state = .pending(continuation)
                        return nil
                    }
                    state = .taken
                    return result
                }
                if let given { continuation.resume(with: given) }
            }
        }

        func give(_ result: Swift.Result<Value, any Error>) {
            let waiting = state.withLock { state -> CheckedContinuation<Value, any Error>? in
                switch state {
                case .pending(let continuation?):
                    state = .taken
                    return continuation
                case .pending(nil):
                    state = .given(result)
                    return nil
                case .given, .taken:
                    return nil
                }
            }
            waiting?.resume(with: result)
        }
    }

    private static func meansConnectionLost(_ error: PSQLError) -> Bool {
        [PSQLError.Code.connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed].contains(error.code)
    }

    /// Shuts the pool down: its connections are closed and, once they are, it ends. Waits for
    /// that at most `closeWait`: the pool's own keep-alive query can be stranded on a
    /// connection that closed under it (see `withConnection`), and the pool would then never
    /// end; a server's stop must not wait for it.
    public func close() async {
        deadlines.stop()
        runTask.cancel()
        let ended = Outcome<Bool>()
        let runTask = runTask
        // Waiting on a task's value cannot be cancelled: a pool that never ends leaves this
        // waiter behind with it.
        Task {
            await runTask.value
            ended.give(.success(true))
        }
        let timer = Task {
            try? await Task.sleep(for: Self.closeWait)
            ended.give(.success(false))
        }
        if (try? await ended.value()) != true {
            logger.warning("the PostgreSQL pool did not end within \(Self.closeWait) of its shutdown; left behind")
        }
        timer.cancel()
    }

    public func statementNames() async -> KeptStatementCounts? { names.counts }

    /// How long `close` waits for the pool to end.
    static let closeWait: Duration = .seconds(10)

    fileprivate func run(_ statement: SQLStatement, on connection: PostgresConnection) async throws -> [SQLRow] {
        var bindings = PostgresBindings(capacity: statement.binds.count)
        var types: [PostgresDataType] = []
        types.reserveCapacity(statement.binds.count)
        for value in statement.binds {
            switch value {
            case .null: bindings.appendNull(); types.append(.null)
            case .integer(let number): bindings.append(number); types.append(.int8)
            case .text(let text): bindings.append(text); types.append(.text)
            case .blob(let data): bindings.append(ByteBuffer(bytes: data)); types.append(.bytea)
            }
        }
        let key = KeptStatementNames.Key(text: statement.text, types: types)
        do {
            guard let name = names.name(for: key) else {
                names.sentUnnamed()
                let rows = try await connection.query(PostgresQuery(unsafeSQL: statement.text, binds: bindings), logger: logger)
                return try await Self.collect(rows)
            }
            do {
                return try await KeptStatement.$current.withValue(.init(name: name, text: statement.text, types: types)) {
                    try await Self.collect(connection.execute(KeptStatement(bindings: bindings), logger: logger))
                }
            } catch let error as PSQLError where KeptStatementNames.mayHaveFailedToPrepare(error) {
                // A connection that failed to prepare a name fails every later use of it: the
                // statement is given a new name, and this run's error stands.
                names.retire(key, name: name)
                throw error
            }
        } catch let error as PSQLError {
            if error.serverInfo?[.sqlState] == PostgresError.Code.uniqueViolation.raw {
                throw StorageError.uniqueViolation
            }
            throw error
        }
    }

    private static func collect<Rows: AsyncSequence>(_ rows: Rows) async throws -> [SQLRow] where Rows.Element == PostgresRow {
        var result: [SQLRow] = []
        var columns: SQLRow.Columns?
        for try await row in rows {
            let shared = columns ?? SQLRow.Columns(row.map(\.columnName))
            columns = shared
            var cells: [SQLValue] = []
            cells.reserveCapacity(shared.names.count)
            for cell in row { cells.append(try decode(cell)) }
            result.append(SQLRow(columns: shared, cells: cells))
        }
        return result
    }

    private static func decode(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
        case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea:
            let buffer = try cell.decode(ByteBuffer.self)
            return .blob(Data(buffer.readableBytesView))
        default: return .text(try cell.decode(String.self))
        }
    }

    private struct TransactionExecutor: SQLExecutor {
        let database: PostgresDatabase
        let connection: PostgresConnection
        let committed: AfterCommitActions
        var dialect: SQLDialect { .postgres }

        func run(_ statement: SQLStatement) async throws -> [SQLRow] {
            try await database.run(statement, on: connection)
        }

        func afterCommit(_ action: @escaping @Sendable () -> Void) {
            committed.add(action)
        }
    }
}

/// The names of the statements each connection keeps prepared: one per distinct text and value
/// types, `cs1`, `cs2`, … in the order they are first run.
final class KeptStatementNames: Sendable {
    struct Key: Hashable, Sendable {
        let text: String
        let types: [PostgresDataType]
    }

    /// Distinct statements kept at once. The server's statements are a few hundred texts; lists
    /// of values (`IN (…)`) vary, and past the limit such statements are sent unnamed.
    static let limit = 512
    /// Names handed out at most, retired ones included, so retiring cannot grow the map for ever.
    static let issuedLimit = 4 * limit

    private struct State {
        var names: [Key: String] = [:]
        var issued = 0
        var unnamedRuns = 0
    }

    private let state = Mutex(State())

    /// The name for `key`, or nil once `limit` statements are kept or `issuedLimit` names given.
    func name(for key: Key) -> String? {
        state.withLock { state in
            if let name = state.names[key] { return name }
            guard state.names.count < Self.limit, state.issued < Self.issuedLimit else { return nil }
            state.issued += 1
            let name = "cs\(state.issued)"
            state.names[key] = name
            return name
        }
    }

    /// Counts a run of a statement that got no name.
    func sentUnnamed() {
        state.withLock { $0.unnamedRuns += 1 }
    }

    var counts: KeptStatementCounts {
        state.withLock { KeptStatementCounts(kept: $0.names.count, unnamedRuns: $0.unnamedRuns) }
    }

    /// Gives `key` a new name at its next run: some connection may hold `name` as failed.
    func retire(_ key: Key, name: String) {
        state.withLock { state in
            if state.names[key] == name { state.names[key] = nil }
        }
    }

    /// Whether `error` may have come from preparing the statement rather than running it. A
    /// connection remembers a failed preparation and fails every later use of the name, so the
    /// name must not be used again. Constraint violations (class 23) and serialization failures
    /// (class 40) only arise when a statement runs.
    static func mayHaveFailedToPrepare(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return !state.hasPrefix("23") && !state.hasPrefix("40")
    }
}

/// A kept statement as PostgresNIO's prepared-statement interface takes it. That interface names
/// a statement and its text by its type (static properties), so both are read from a task-local
/// value that `PostgresDatabase.run` sets around each execution.
private struct KeptStatement: PostgresPreparedStatement {
    struct Current: Sendable {
        var name = ""
        var text = ""
        var types: [PostgresDataType] = []
    }

    @TaskLocal static var current = Current()

    static var name: String { current.name }
    static var sql: String { current.text }
    static var bindingDataTypes: [PostgresDataType] { current.types }

    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
