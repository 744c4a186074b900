import Foundation
import Logging
import Synchronization
import Testing
@testable import CountersignServer

/// The storage engines a test runs on. PostgreSQL joins when `COUNTERSIGN_TEST_POSTGRES_URL`
/// names a server whose role may create databases; on CI it must, and a missing URL fails
/// loudly there instead of skipping.
enum Engine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static let postgresURL = ProcessInfo.processInfo.environment["COUNTERSIGN_TEST_POSTGRES_URL"]
    static let onCI = ProcessInfo.processInfo.environment["CI"] == "true"

    /// The engines to run on here.
    static let available: [Engine] = {
        if postgresURL != nil || onCI { return [.sqlite, .postgres] }
        FileHandle.standardError.write(Data(
            "note: COUNTERSIGN_TEST_POSTGRES_URL is not set; PostgreSQL storage and integration tests are SKIPPED (SQLite only)\n".utf8))
        return [.sqlite]
    }()
}

let testLogger: Logger = {
    var logger = Logger(label: "countersign-tests")
    logger.logLevel = .critical
    return logger
}()

/// A scratch database: a fresh SQLite file, or a fresh PostgreSQL database created for the
/// test and dropped after it.
struct ScratchDatabase: Sendable {
    let engine: Engine
    let directory: URL
    /// For PostgreSQL: the URL of the database created for this test.
    let postgresURL: String?

    /// How long a statement of the tests waits for a PostgreSQL connection. While the suite
    /// starts, dozens of servers and scratch databases connect at once and a new connection
    /// can take longer than a server's default wait; only the outage tests want a short one.
    /// On a slower two-core machine the start keeps both cores busy for a minute and more (the
    /// first unit tests finish after 50 s there), and connections queue behind that.
    static let busyWait: Duration = .seconds(120)

    static func make(_ engine: Engine) async throws -> ScratchDatabase {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        switch engine {
        case .sqlite:
            return ScratchDatabase(engine: engine, directory: directory, postgresURL: nil)
        case .postgres:
            let base = try #require(Engine.postgresURL, "COUNTERSIGN_TEST_POSTGRES_URL must be set on CI")
            let name = "cs_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
            let admin = try await PostgresDatabase.connect(url: base, connectionWait: Self.busyWait, logger: testLogger)
            try await admin.run("CREATE DATABASE \(raw: name)")
            await admin.close()
            var components = try #require(URLComponents(string: base))
            components.path = "/\(name)"
            return ScratchDatabase(engine: engine, directory: directory, postgresURL: components.string)
        }
    }

    func open() async throws -> any Database {
        switch engine {
        case .sqlite:
            return try await SQLiteDatabase.open(path: directory.appendingPathComponent("test.sqlite").path, logger: testLogger)
        case .postgres:
            return try await PostgresDatabase.connect(url: try #require(postgresURL), connectionWait: Self.busyWait, logger: testLogger)
        }
    }

    func destroy() async {
        try? FileManager.default.removeItem(at: directory)
        if let postgresURL, let base = Engine.postgresURL, let name = URLComponents(string: postgresURL)?.path.dropFirst() {
            if let admin = try? await PostgresDatabase.connect(url: base, connectionWait: Self.busyWait, logger: testLogger) {
                _ = try? await admin.run("DROP DATABASE IF EXISTS \(raw: String(name)) WITH (FORCE)")
                await admin.close()
            }
        }
    }
}

extension ScratchDatabase {
    /// Runs `body` on a fresh database of `engine`, then closes and drops it, whether `body`
    /// throws or not.
    static func with(_ engine: Engine, _ body: (any Database) async throws -> Void) async throws {
        let scratch = try await make(engine)
        let database = try await scratch.open()
        do {
            try await body(database)
        } catch {
            await database.close()
            await scratch.destroy()
            throw error
        }
        await database.close()
        await scratch.destroy()
    }
}

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date()) { current = Mutex(start) }

    var now: Date { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    var function: @Sendable () -> Date { { self.now } }
}

/// Countersign's PostgreSQL database, by a name that files importing PostgresNIO (which has a
/// protocol of the same name) can use.
typealias CountersignPostgresDatabase = PostgresDatabase
