import Foundation
import Testing
@testable import CountersignServer

/// The schema the migrations build, against the snapshot recorded from the code that held all
/// of them in one list (`Fixtures/schema-<engine>.txt`): every version must build the same
/// tables, columns (in the same order), constraints and indexes, under the same number and
/// name, so that a database made by any earlier release upgrades exactly as it did.
@Suite("Migrations")
struct MigrationTests {
    private func withDatabase(_ engine: Engine, _ body: (any Database) async throws -> Void) async throws {
        let scratch = try await ScratchDatabase.make(engine)
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

    /// Writes the snapshot files from the migrations as they are. Run once, with
    /// `COUNTERSIGN_RECORD_SCHEMA_SNAPSHOT=1`, on the code before the split.
    @Test("record the schema snapshot", .enabled(if: ProcessInfo.processInfo.environment["COUNTERSIGN_RECORD_SCHEMA_SNAPSHOT"] == "1"),
          arguments: Engine.available)
    func recordSnapshot(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            var versions: [SchemaSnapshot.Version] = []
            var dump = ""
            for migration in Migrations.all {
                try await Migrations.migrate(database, through: migration.version)
                dump = try await SchemaDump.text(of: database)
                versions.append(.init(number: migration.version, name: migration.name, digest: SchemaDump.digest(of: dump)))
            }
            let file = SchemaSnapshot.file(engine)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(SchemaSnapshot(versions: versions, finalDump: dump).text.utf8).write(to: file)
        }
    }
}
