import Foundation
import Testing
@testable import CountersignServer

/// The SQL layer itself: what an interpolated statement binds and how its text reads, rows
/// decoded with `Decodable`, and values of every stored type through both engines unchanged.
@Suite("SQL statements")
struct SQLStatementTests {
    private enum Colour: String, Codable, Equatable { case red, green }

    @Test("every interpolated value is bound, numbered in order; raw text, lists and rows as written")
    func bindsAndText() {
        let id = "x' OR '1'='1"
        let limit = 5
        let colour: Colour? = .green
        let statement: SQLStatement =
            "SELECT \(raw: "id, name") FROM t WHERE id = \(id) AND colour = \(colour) AND n IN (\(list: ["a", "b"])) LIMIT \(limit)"
        #expect(statement.text == "SELECT id, name FROM t WHERE id = $1 AND colour = $2 AND n IN ($3, $4) LIMIT $5")
        #expect(statement.binds == [.text(id), .text("green"), .text("a"), .text("b"), .integer(5)])

        let nothing: Date? = nil
        let when = Date(timeIntervalSince1970: 1.2345)
        let insert: SQLStatement = "INSERT INTO t VALUES \(rows: [[.integer(1), .null], [.text("b"), .blob(Data([0]))]]), (\(when), \(nothing), \(true))"
        #expect(insert.text == "INSERT INTO t VALUES ($1, $2), ($3, $4), ($5, $6, $7)")
        #expect(insert.binds == [.integer(1), .null, .text("b"), .blob(Data([0])), .integer(1235), .null, .integer(1)])

        let plain: SQLStatement = "SELECT 1 AS one"
        #expect(plain.text == "SELECT 1 AS one" && plain.binds.isEmpty)
    }

    @Test("a condition another repository publishes is spliced with its binds numbered after the statement's")
    func spliceAnOwnersCondition() {
        let condition: SQLStatement = "EXISTS (SELECT 1 FROM u WHERE u.id = \("u1") AND u.status = \("active") AND u.n > \(10))"
        let when = 7
        let statement: SQLStatement = "UPDATE t SET a = \(when) WHERE id = \("t1") AND \(condition) AND b = \("last")"
        #expect(statement.text == "UPDATE t SET a = $1 WHERE id = $2 AND EXISTS (SELECT 1 FROM u WHERE u.id = $3 AND u.status = $4 AND u.n > $5) AND b = $6")
        #expect(statement.binds == [.integer(7), .text("t1"), .text("u1"), .text("active"), .integer(10), .text("last")])
        let first: SQLStatement = "SELECT \(condition)"
        #expect(first.text == "SELECT EXISTS (SELECT 1 FROM u WHERE u.id = $1 AND u.status = $2 AND u.n > $3)")
    }

    @Test("a schema statement names the bytes type as each engine spells it")
    func schemaStatement() {
        let statement: SchemaStatement = "CREATE TABLE t (a \(.bytes) NOT NULL, b \(.bytes))"
        #expect(statement.text(for: .sqlite) == "CREATE TABLE t (a BLOB NOT NULL, b BLOB)")
        #expect(statement.text(for: .postgres) == "CREATE TABLE t (a BYTEA NOT NULL, b BYTEA)")
    }

    @Test("a statement for PostgreSQL alone runs there and is skipped on SQLite; others run on both")
    func postgresOnlyStatement() {
        let renaming = SchemaStatement.postgresOnly("ALTER TABLE t RENAME CONSTRAINT t_next_pkey TO t_pkey")
        #expect(renaming.runs(on: .postgres))
        #expect(!renaming.runs(on: .sqlite))
        let both: SchemaStatement = "CREATE INDEX t_a ON t (a)"
        #expect(both.runs(on: .postgres) && both.runs(on: .sqlite))
    }

    private struct Stored: Decodable, Equatable {
        var id: String
        var label: String?
        var count: Int64
        var small: Int?
        var flag: Bool
        var bytes: Data?
        var at: Date
        var later: Date?
        var colour: Colour
        var other: Colour?
    }

    private func withTable(_ engine: Engine, _ body: (any Database) async throws -> Void) async throws {
        try await ScratchDatabase.with(engine) { database in
            let create: SchemaStatement = """
                CREATE TABLE sql_layer_check (id TEXT PRIMARY KEY, label TEXT, count BIGINT NOT NULL, small BIGINT,
                    flag BIGINT NOT NULL, bytes \(.bytes), at BIGINT NOT NULL, later BIGINT, colour TEXT NOT NULL, other TEXT)
                """
            try await database.run(SQLStatement(stringLiteral: create.text(for: database.dialect)))
            try await body(database)
        }
    }

    private func insert(_ row: Stored, into database: any Database) async throws {
        try await database.run(
            """
            INSERT INTO sql_layer_check (id, label, count, small, flag, bytes, at, later, colour, other)
            VALUES (\(row.id), \(row.label), \(row.count), \(row.small), \(row.flag), \(row.bytes), \(row.at), \(row.later),
                \(row.colour), \(row.other))
            """)
    }

    /// A value's text as a person or an attacker might write it: quotes, placeholders of both
    /// styles, SQL, non-ASCII, and the empty string.
    private static let awkwardTexts = [
        "", "'", "''", "?", "$1", "$2 $1", "?1", ":name", "@p", "\\", "--", "/*", "'; DROP TABLE sql_layer_check; --",
        "Zahlung an Müller: 12 €", "🙂 👍🏽", String(repeating: "long ", count: 2000),
    ]

    @Test("values of every stored type come back unchanged, however awkward", arguments: Engine.available)
    func roundTrip(engine: Engine) async throws {
        try await withTable(engine) { database in
            var generator = SeededGenerator(seed: 0x5EED)
            var written: [Stored] = []
            for index in 0..<300 {
                let text = Self.awkwardTexts[index % Self.awkwardTexts.count]
                let row = Stored(
                    id: "row-\(index)-\(text.prefix(40))",
                    label: Bool.random(using: &generator) ? nil : text,
                    count: [Int64.min, Int64.max, 0, -1, Int64.random(in: .min ... .max, using: &generator)][index % 5],
                    small: Bool.random(using: &generator) ? nil : Int.random(in: -1_000_000...1_000_000, using: &generator),
                    flag: Bool.random(using: &generator),
                    bytes: index % 7 == 0 ? nil : Data((0..<Int.random(in: 0...64, using: &generator)).map { _ in
                        UInt8.random(in: 0...255, using: &generator)
                    }),
                    at: Date(timeIntervalSince1970: TimeInterval(Int64.random(in: 0...4_000_000_000_000, using: &generator)) / 1000),
                    later: Bool.random(using: &generator) ? nil : Date(timeIntervalSince1970: 1_700_000_000.123),
                    colour: Bool.random(using: &generator) ? .red : .green,
                    other: Bool.random(using: &generator) ? nil : .red)
                try await insert(row, into: database)
                written.append(row)
            }
            let read = try await database.all("SELECT * FROM sql_layer_check", as: Stored.self)
            #expect(read.sorted { $0.id < $1.id } == written.sorted { $0.id < $1.id })
            // A bound value is never text of the statement: each awkward text finds its own rows.
            for text in Self.awkwardTexts {
                let labelled = try await database.all("SELECT id FROM sql_layer_check WHERE label = \(text)", column: "id", as: String.self)
                #expect(Set(labelled) == Set(written.filter { $0.label == text }.map(\.id)))
            }
            #expect(try await database.first("SELECT COUNT(*) AS n FROM sql_layer_check", column: "n", as: Int.self) == 300)
        }
    }

    @Test("IN lists longer than one statement may bind run in parts", arguments: Engine.available)
    func chunkedLists(engine: Engine) async throws {
        try await withTable(engine) { database in
            let ids = (0..<1_201).map { "id-\($0)" }
            for part in stride(from: 0, to: ids.count, by: 400) {
                let rows = ids[part..<min(part + 400, ids.count)].map { id in
                    [id.sqlValue, SQLValue.null, Int64(1).sqlValue, SQLValue.null, true.sqlValue, SQLValue.null,
                     Date().sqlValue, SQLValue.null, Colour.red.rawValue.sqlValue, SQLValue.null]
                }
                try await database.run("INSERT INTO sql_layer_check VALUES \(rows: rows)")
            }
            let found = try await database.run(chunking: ids + ["absent"]) { part in
                "SELECT id FROM sql_layer_check WHERE id IN (\(list: part))"
            }
            #expect(found.count == ids.count)
            #expect(try await database.run(chunking: []) { "SELECT id FROM sql_layer_check WHERE id IN (\(list: $0))" }.isEmpty)
        }
    }

    @Test("a row that does not fit its type is a precise storage error", arguments: Engine.available)
    func decodingFailures(engine: Engine) async throws {
        try await withTable(engine) { database in
            try await database.run(
                """
                INSERT INTO sql_layer_check (id, label, count, flag, at, colour, other)
                VALUES ('a', 'text', 1, 0, 0, 'blue', 'red')
                """)
            let error = await #expect(throws: StorageError.self) {
                try await database.all("SELECT * FROM sql_layer_check", as: Stored.self)
            }
            guard case .corrupt(let what) = error else {
                Issue.record("an unknown enumeration value must be corrupt, got \(String(describing: error))")
                return
            }
            #expect(what.contains("colour"))
            try await database.run("UPDATE sql_layer_check SET colour = 'red'")
            #expect(try await database.first("SELECT * FROM sql_layer_check", as: Stored.self)?.colour == .red)

            await #expect(throws: StorageError.missingColumn("bytes")) {
                try await database.first("SELECT id, label, count, small, flag, at, later, colour, other FROM sql_layer_check", as: Stored.self)
            }
            await #expect(throws: StorageError.unexpectedNull("id")) {
                try await database.first("SELECT CAST(NULL AS TEXT) AS id", column: "id", as: String.self)
            }
            await #expect(throws: StorageError.typeMismatch("count")) {
                try await database.first("SELECT label AS count FROM sql_layer_check", column: "count", as: Int64.self)
            }
        }
    }
}

/// A small deterministic generator (SplitMix64), so that a failing case can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
