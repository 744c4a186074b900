import Crypto
import Foundation
@testable import CountersignServer

/// The schema of a database as text, in an order that does not depend on the order the
/// statements ran in: SQLite's own record of every table and index (`sqlite_master`, whose
/// text SQLite rewrites on `ALTER TABLE … ADD COLUMN`, so column order shows), and on
/// PostgreSQL every column with its position, type, nullability and default, every constraint
/// and every index, as the catalogue prints them.
enum SchemaDump {
    static func text(of database: any Database) async throws -> String {
        switch database.dialect {
        case .sqlite: try await sqlite(database)
        case .postgres: try await postgres(database)
        }
    }

    static func digest(of dump: String) -> String {
        SHA256.hash(data: Data(dump.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    private static func sqlite(_ database: any Database) async throws -> String {
        let rows = try await database.run(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        return try rows.map { row in
            let sql = try row.optionalString("sql") ?? "(implicit)"
            return "\(try row.string("type")) \(try row.string("name")) on \(try row.string("tbl_name")):\n\(sql)\n"
        }.joined()
    }

    private static func postgres(_ database: any Database) async throws -> String {
        let columns = try await database.run(
            """
            SELECT table_name::text AS table_name, ordinal_position::bigint AS position, column_name::text AS column_name,
                data_type::text AS data_type, is_nullable::text AS nullable, column_default::text AS column_default
            FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position
            """)
        let constraints = try await database.run(
            """
            SELECT conrelid::regclass::text AS table_name, conname::text AS name, pg_get_constraintdef(oid) AS definition
            FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2
            """)
        let indexes = try await database.run(
            """
            SELECT tablename::text AS table_name, indexname::text AS name, indexdef::text AS definition
            FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1, 2
            """)
        var lines: [String] = []
        for row in columns {
            let nullable = try row.string("nullable") == "YES" ? "NULL" : "NOT NULL"
            let defaultValue = try row.optionalString("column_default").map { " DEFAULT \($0)" } ?? ""
            lines.append("column \(try row.string("table_name")).\(try row.int("position")) \(try row.string("column_name")) "
                + "\(try row.string("data_type")) \(nullable)\(defaultValue)")
        }
        for row in constraints {
            lines.append("constraint \(try row.string("table_name")).\(try row.string("name")) \(try row.string("definition"))")
        }
        for row in indexes {
            lines.append("index \(try row.string("table_name")).\(try row.string("name")) \(try row.string("definition"))")
        }
        return lines.map { $0 + "\n" }.joined()
    }
}

/// The schema the migrations built before they were split by feature, recorded from that code:
/// for each version, its name and the digest of `SchemaDump.text` once it is applied; and the
/// whole dump of the last version, for a readable difference when it no longer matches.
struct SchemaSnapshot: Equatable {
    struct Version: Equatable {
        var number: Int64
        var name: String
        var digest: String
    }

    var versions: [Version]
    var finalDump: String

    static func file(_ engine: Engine) -> URL {
        BuildProducts.serverTests.appendingPathComponent("Fixtures").appendingPathComponent("schema-\(engine.rawValue).txt")
    }

    var text: String {
        versions.map { "version \($0.number) \($0.name) \($0.digest)\n" }.joined() + "\n" + finalDump
    }

    init(versions: [Version], finalDump: String) {
        self.versions = versions
        self.finalDump = finalDump
    }

    init(parsing text: String) throws {
        let parts = text.split(separator: "\n\n", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw StorageError.corrupt("schema snapshot") }
        versions = try parts[0].split(separator: "\n").map { line in
            let fields = line.split(separator: " ")
            guard fields.count == 4, fields[0] == "version", let number = Int64(fields[1]) else {
                throw StorageError.corrupt("schema snapshot line \(line)")
            }
            return Version(number: number, name: String(fields[2]), digest: String(fields[3]))
        }
        finalDump = String(parts[1])
    }
}
