import Foundation
import Testing
@testable import CountersignServer

/// The schema the migrations build, against the snapshot recorded from the code that held all
/// of them in one list (`Fixtures/schema-<engine>.txt`, written by the commit before the split
/// by feature): every version must build the same tables, columns (in the same order),
/// constraints and indexes, under the same number and name, so that a database made by any
/// earlier release is recognised and upgrades exactly as it did.
@Suite("Migrations")
struct MigrationTests {
    private func withDatabase(_ engine: Engine, _ body: (any Database) async throws -> Void) async throws {
        try await ScratchDatabase.with(engine, body)
    }

    private func snapshot(_ engine: Engine) throws -> SchemaSnapshot {
        try SchemaSnapshot(parsing: String(contentsOf: SchemaSnapshot.file(engine), encoding: .utf8))
    }

    @Test("each version builds the schema the single migration list built", arguments: Engine.available)
    func everyVersionMatchesTheSnapshot(engine: Engine) async throws {
        let recorded = try snapshot(engine)
        try await withDatabase(engine) { database in
            var dump = ""
            for version in recorded.versions {
                try await Migrations.migrate(database, through: version.number)
                dump = try await SchemaDump.text(of: database)
                #expect(SchemaDump.digest(of: dump) == version.digest, "schema after version \(version.number) \(version.name)")
            }
            #expect(dump == recorded.finalDump)
            let applied = try await database.run("SELECT version, name FROM schema_migrations ORDER BY version")
            #expect(try applied.map { "\(try $0.int("version")) \(try $0.string("name"))" }
                == recorded.versions.map { "\($0.number) \($0.name)" })
        }
    }

    @Test("versions keep the numbers and names installations have recorded", arguments: Engine.available)
    func versionsKeepTheirNames(engine: Engine) throws {
        let recorded = try snapshot(engine).versions.map { "\($0.number) \($0.name)" }
        #expect(Migrations.all.prefix(recorded.count).map { "\($0.version) \($0.name)" } == recorded)
    }

    @Test("a database that recorded every version is left as it is", arguments: Engine.available)
    func recordedVersionsAreNotRunAgain(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            // What the single list wrote: the table, and one row per version it applied.
            try await database.run(
                "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)")
            for version in try snapshot(engine).versions {
                try await database.run(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (\(version.number), \(version.name), \(1_700_000_000_000))")
            }
            let before = try await SchemaDump.text(of: database)
            try await Migrations.migrate(database)
            #expect(try await SchemaDump.text(of: database) == before)
            #expect(try await Migrations.currentVersion(database) == (try snapshot(engine)).versions.last?.number)
        }
    }

    @Test("a database left at an earlier version upgrades to the recorded schema",
          arguments: Engine.available.flatMap { engine in [1, 3, 4, 8, 11].map { (engine, Int64($0)) } })
    func earlierVersionUpgrades(engine: Engine, from version: Int64) async throws {
        let recorded = try snapshot(engine)
        try await withDatabase(engine) { database in
            try await Migrations.migrate(database, through: version)
            try await Migrations.migrate(database)
            #expect(try await SchemaDump.text(of: database) == recorded.finalDump)
        }
    }

    /// Appends the versions the snapshot lacks (a release that adds one), leaving the recorded
    /// ones as they are: `COUNTERSIGN_RECORD_SCHEMA=1 swift test --filter MigrationTests`.
    @Test("records a new version into the snapshot", .enabled(if: ProcessInfo.processInfo.environment["COUNTERSIGN_RECORD_SCHEMA"] == "1"),
          arguments: Engine.available)
    func recordNewVersions(engine: Engine) async throws {
        var recorded = try snapshot(engine)
        try await withDatabase(engine) { database in
            try await Migrations.migrate(database, through: recorded.versions.last?.number ?? 0)
            for migration in Migrations.all where migration.version > recorded.versions.last?.number ?? 0 {
                try await Migrations.migrate(database, through: migration.version)
                let dump = try await SchemaDump.text(of: database)
                recorded.versions.append(.init(number: migration.version, name: migration.name, digest: SchemaDump.digest(of: dump)))
                recorded.finalDump = dump
            }
        }
        try recorded.text.write(to: SchemaSnapshot.file(engine), atomically: true, encoding: .utf8)
    }

    @Test("every feature's changes are in version order, and no version is empty")
    func featureChangesAreOrdered() {
        for feature in Migrations.features {
            let versions = feature.changes.map(\.version.rawValue)
            #expect(versions == versions.sorted() && Set(versions).count == versions.count, "\(feature.feature)")
        }
        #expect(Migrations.all.allSatisfy { !$0.statements.isEmpty })
        #expect(Set(Migrations.features.map(\.feature)).count == Migrations.features.count)
    }
}
