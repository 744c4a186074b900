import Foundation
import Testing
@testable import CountersignServer

@Suite("Writes run together")
struct SQLTogetherTests {
    /// A piece of a statement: text written as it is, or a bound value.
    private enum Piece {
        case text(String)
        case value(Int64)
    }

    /// Text that holds something like a placeholder without being one, each piece closed, so
    /// that a placeholder after it is one.
    private static let decoys = [
        "'a $1 b' ", "'it''s $2' ", "\"col$3\" ", "-- note $4\n", "/* $5 */ ", "$$ $6 $$ ", "$tag$ $7 $tag$ ",
        "$é$ $8 $é$ ", "E'x $9' ", "E'it\\'s $10' ", "e'\\\\' ",
    ]
    private static let plain = ["SELECT ", "x = ", ", ", "(", ") ", "WHERE ", "AND id IN ", "'' ", "\"\" ", "é ", "NAME'x' "]

    /// The statement of `pieces`, and its text as it must read with its placeholders numbered
    /// after `offset` others.
    private static func statement(_ pieces: [Piece], offset: Int) -> (SQLStatement, String) {
        var interpolation = SQLStatement.Interpolation(literalCapacity: 0, interpolationCount: 0)
        var expected = ""
        var bound = 0
        for piece in pieces {
            switch piece {
            case .text(let text):
                interpolation.appendLiteral(text)
                expected += text
            case .value(let value):
                interpolation.appendInterpolation(SQLValue.integer(value))
                interpolation.appendLiteral(" ")
                bound += 1
                expected += "$\(bound + offset) "
            }
        }
        return (SQLStatement(stringInterpolation: interpolation), expected)
    }

    @Test("renumbering moves every placeholder and nothing quoted, over 2,000 random statements")
    func renumberingIsExact() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var pieces: [Piece] = []
            for _ in 0..<Int.random(in: 1...14, using: &generator) {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: pieces.append(.value(Int64.random(in: 0...1000, using: &generator)))
                case 1: pieces.append(.text(Self.decoys.randomElement(using: &generator)!))
                default: pieces.append(.text(Self.plain.randomElement(using: &generator)!))
                }
            }
            let offset = Int.random(in: 0...120, using: &generator)
            let (statement, expected) = Self.statement(pieces, offset: offset)
            #expect(statement.renumbered(after: offset) == expected, "\(statement.text)")
        }
    }

    @Test("statements together: the writes are WITH clauses, the SELECT the statement, the binds in order")
    func togetherText() {
        let parent: SQLStatement = "INSERT INTO parents (id) VALUES (\("p1"))"
        let notify: SQLStatement = "SELECT pg_notify(\("channel"), \("payload")) IS NULL AS sent"
        let child: SQLStatement = "INSERT INTO children (parent_id, n) VALUES (\("p1"), \(7))"
        let together = SQLStatement.together([parent, notify, child])
        #expect(together.text == """
            WITH w1 AS (INSERT INTO parents (id) VALUES ($1)), w2 AS (INSERT INTO children (parent_id, n) VALUES ($2, $3)) \
            SELECT pg_notify($4, $5) IS NULL AS sent
            """)
        #expect(together.binds == [.text("p1"), .text("p1"), .integer(7), .text("channel"), .text("payload")])
        #expect(SQLStatement.together([parent]).text == parent.text)
        let writes = SQLStatement.together([parent, child])
        #expect(writes.text.hasPrefix("WITH w1 AS (INSERT INTO parents"))
        #expect(writes.text.hasSuffix(" INSERT INTO children (parent_id, n) VALUES ($2, $3)"))
    }

    private func withTables(_ engine: Engine, _ body: (any Database) async throws -> Void) async throws {
        try await ScratchDatabase.with(engine) { database in
            try await database.run("CREATE TABLE parents (id TEXT PRIMARY KEY)")
            try await database.run("CREATE TABLE children (parent_id TEXT NOT NULL REFERENCES parents (id), n INTEGER NOT NULL)")
            try await body(database)
        }
    }

    private func count(_ table: String, _ database: any Database) async throws -> Int {
        try await database.first("SELECT COUNT(*) AS n FROM \(raw: table)", column: "n", as: Int.self) ?? -1
    }

    @Test("a child goes with the parent it references, and a SELECT among them", arguments: Engine.available)
    func runsTogether(engine: Engine) async throws {
        try await withTables(engine) { database in
            // On PostgreSQL the SELECT becomes the statement, and the child's reference is
            // checked at its end.
            try await database.run(atomically: [
                "INSERT INTO parents (id) VALUES (\("p1"))",
                "SELECT \(5) AS five",
                "INSERT INTO children (parent_id, n) VALUES (\("p1"), \(1)), (\("p1"), \(2))",
            ])
            #expect(try await count("parents", database) == 1)
            #expect(try await count("children", database) == 2)
            try await database.transaction { executor in
                try await executor.run(together: [
                    "INSERT INTO parents (id) VALUES (\("p2"))", "INSERT INTO children (parent_id, n) VALUES (\("p2"), \(3))",
                ])
            }
            #expect(try await count("children", database) == 3)
        }
    }

    @Test("writes together are all stored or none: a duplicate key or a missing parent stores nothing",
          arguments: Engine.available)
    func allOrNothing(engine: Engine) async throws {
        try await withTables(engine) { database in
            try await database.run("INSERT INTO parents (id) VALUES (\("p0"))")
            await #expect(throws: StorageError.uniqueViolation) {
                try await database.run(atomically: [
                    "INSERT INTO parents (id) VALUES (\("p1"))",
                    "INSERT INTO children (parent_id, n) VALUES (\("p1"), \(1))",
                    "INSERT INTO parents (id) VALUES (\("p0"))",
                ])
            }
            await #expect(throws: (any Error).self) {
                try await database.run(atomically: [
                    "INSERT INTO parents (id) VALUES (\("p2"))",
                    "INSERT INTO children (parent_id, n) VALUES (\("nobody"), \(1))",
                ])
            }
            #expect(try await count("parents", database) == 1)
            #expect(try await count("children", database) == 0)
        }
    }
}
