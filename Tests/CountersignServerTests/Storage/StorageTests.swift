import CountersignCore
import Foundation
import PostgresNIO
import Synchronization
import Testing
@testable import CountersignServer

/// The repositories on each engine: the same statements must behave the same on SQLite and
/// PostgreSQL.
@Suite("Storage")
struct StorageTests {
    private func withDatabase(_ engine: Engine, _ body: (any Database) async throws -> Void) async throws {
        try await ScratchDatabase.with(engine) { database in
            try await Migrations.migrate(database)
            try await body(database)
        }
    }

    private func seedTenantAndUser(_ database: any Database) async throws -> (tenantID: String, userID: String) {
        let date = Date()
        let tenant = Tenant(id: Identifier.make("ten", at: date), slug: "acme", displayName: "Acme", isDefault: true,
                            signingKey: ECPublicJWK(x: "x", y: "y"), createdAt: date, updatedAt: date)
        try await SQLTenantRepository().insert(tenant, sealedSigningKey: Data([1, 2, 3]), on: database)
        let user = User(id: Identifier.make("usr", at: date), tenantID: tenant.id, username: "alice", displayName: nil,
                        status: .active, createdAt: date, updatedAt: date)
        try await SQLUserRepository().insert(user, on: database)
        return (tenant.id, user.id)
    }

    @Test("migrations apply once and are recorded", arguments: Engine.available)
    func migrationsAreIdempotent(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            try await Migrations.migrate(database)
            #expect(try await Migrations.currentVersion(database) == Migrations.all.last?.version)
            let rows = try await database.run("SELECT version FROM schema_migrations")
            #expect(rows.count == Migrations.all.count)
        }
    }

    @Test("a duplicate key surfaces as StorageError.uniqueViolation", arguments: Engine.available)
    func duplicateKeyIsTyped(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            let (tenantID, _) = try await seedTenantAndUser(database)
            let date = Date()
            let twin = User(id: Identifier.make("usr", at: date), tenantID: tenantID, username: "alice", displayName: nil,
                            status: .active, createdAt: date, updatedAt: date)
            await #expect(throws: StorageError.uniqueViolation) {
                try await SQLUserRepository().insert(twin, on: database)
            }
        }
    }

    @Test("a transaction that throws leaves nothing behind", arguments: Engine.available)
    func transactionRollsBack(engine: Engine) async throws {
        struct Abort: Error {}
        try await withDatabase(engine) { database in
            let (tenantID, _) = try await seedTenantAndUser(database)
            await #expect(throws: Abort.self) {
                try await database.transaction { executor in
                    let date = Date()
                    try await SQLUserRepository().insert(
                        User(id: Identifier.make("usr", at: date), tenantID: tenantID, username: "bob", displayName: nil,
                             status: .active, createdAt: date, updatedAt: date), on: executor)
                    throw Abort()
                }
            }
            #expect(try await SQLUserRepository().find(username: "bob", tenantID: tenantID, on: database) == nil)
        }
    }

    @Test("an action after commit runs once the transaction commits, in order, never after a rollback, and at once outside one",
          arguments: Engine.available)
    func actionsAfterCommit(engine: Engine) async throws {
        struct Abort: Error {}
        let log = Mutex<[String]>([])
        try await withDatabase(engine) { database in
            let (tenantID, _) = try await seedTenantAndUser(database)
            try await database.transaction { executor in
                let date = Date()
                try await SQLUserRepository().insert(
                    User(id: Identifier.make("usr", at: date), tenantID: tenantID, username: "carol", displayName: nil,
                         status: .active, createdAt: date, updatedAt: date), on: executor)
                executor.afterCommit { log.withLock { $0.append("first") } }
                executor.afterCommit { log.withLock { $0.append("second") } }
                log.withLock { $0.append("body done") }
            }
            log.withLock { $0.append("returned") }
            #expect(log.withLock { $0 } == ["body done", "first", "second", "returned"])
            #expect(try await SQLUserRepository().find(username: "carol", tenantID: tenantID, on: database) != nil)

            log.withLock { $0 = [] }
            await #expect(throws: Abort.self) {
                try await database.transaction { executor in
                    executor.afterCommit { log.withLock { $0.append("rolled back") } }
                    throw Abort()
                }
            }
            #expect(log.withLock { $0 }.isEmpty, "nothing runs for a transaction that rolled back")

            database.afterCommit { log.withLock { $0.append("at once") } }
            #expect(log.withLock { $0 } == ["at once"])
        }
    }

    @Test("many concurrent commits, flushed together, all survive a reopen", arguments: Engine.available)
    func concurrentCommitsSurviveReopen(engine: Engine) async throws {
        let scratch = try await ScratchDatabase.make(engine)
        defer { Task { await scratch.destroy() } }
        let database = try await scratch.open()
        try await Migrations.migrate(database)
        let (tenantID, _) = try await seedTenantAndUser(database)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let date = Date()
                    let user = User(id: Identifier.make("usr", at: date), tenantID: tenantID, username: "user-\(index)",
                                    displayName: nil, status: .active, createdAt: date, updatedAt: date)
                    if index.isMultiple(of: 2) {
                        try await database.transaction { try await SQLUserRepository().insert(user, on: $0) }
                    } else {
                        try await SQLUserRepository().insert(user, on: database)
                    }
                }
            }
            try await group.waitForAll()
        }
        await database.close()
        let reopened = try await scratch.open()
        let count = try await reopened.run("SELECT COUNT(*) AS n FROM users WHERE tenant_id = \(tenantID)")
        #expect(count.first?["n"] == .integer(201))
        await reopened.close()
    }

    @Test("the log flusher answers every caller, and treats a checkpointed-away log as flushed")
    func walFlusherAnswersEveryCaller() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("db.sqlite-wal")
        try Data("frames".utf8).write(to: log)
        let flusher = WALFlusher(logPath: log.path)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<100 { group.addTask { try await flusher.flush() } }
            try await group.waitForAll()
        }
        try FileManager.default.removeItem(at: log)
        try await flusher.flush()
        let unwritable = WALFlusher(logPath: directory.appendingPathComponent("missing-directory/db-wal").path)
        try await unwritable.flush()  // ENOENT: nothing to flush
    }

    @Test("a kept SQLite statement is run again without being parsed again, whatever it is bound to")
    func keptStatementsAreNotPreparedAgain() async throws {
        try await withDatabase(.sqlite) { database in
            let sqlite = try #require(database as? SQLiteDatabase)
            let (_, userID) = try await seedTenantAndUser(database)
            // `name` filters the rows the index on `user_id` finds, in a statement with an order
            // (or a join): the kind of term whose bound value SQLite's planner reads, and so
            // would plan again after its binding was cleared.
            let statement: (String, String?) -> SQLStatement = { user, name in
                "SELECT id FROM devices WHERE user_id = \(user) AND name = \(name) ORDER BY id"
            }
            for round in 0..<50 {
                let rows = try await sqlite.run(statement(round % 2 == 0 ? userID : "usr_other", round % 3 == 0 ? nil : "phone \(round)"))
                #expect(rows.isEmpty)
            }
            #expect(try await sqlite.reprepareCount(of: statement(userID, "phone").text) == 0)
        }
    }

    @Test("PostgreSQL prepares a statement once on a connection and runs it again by its name",
          arguments: Engine.available.filter { $0 == .postgres })
    func postgresKeepsStatementsPrepared(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            let statement: SQLStatement = "SELECT value FROM server_meta WHERE key = \("kept")"
            try await database.transaction { executor in
                for _ in 0..<5 { _ = try await executor.run(statement) }
                // Named statements of the protocol are listed beside those of SQL's PREPARE.
                let kept = try await executor.run(
                    "SELECT name FROM pg_prepared_statements WHERE statement = \(statement.text) AND NOT from_sql")
                #expect(kept.count == 1)
                #expect(try kept.first?.string("name").hasPrefix("cs") == true)
            }
        }
    }

    @Test("past the limit of kept names PostgreSQL statements are sent unnamed, counted, and still answer",
          arguments: Engine.available.filter { $0 == .postgres })
    func postgresCountsUnnamedStatements(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            let before = try #require(await database.statementNames())
            #expect(before.kept > 0)
            #expect(before.unnamedRuns == 0)
            // Distinct texts, each a statement of its own: enough to fill the names and go past.
            let past = 7
            let texts: [String] = (0..<(KeptStatementNames.limit - before.kept + past)).map { "SELECT \($0) AS n" }
            for (index, text) in texts.enumerated() {
                let rows = try await database.run("\(raw: text)")
                #expect(try rows.first?.int("n") == Int64(index))
            }
            #expect(await database.statementNames() == KeptStatementCounts(kept: KeptStatementNames.limit, unnamedRuns: past))
            // A kept statement keeps its name; an unnamed one is counted at every run.
            _ = try await database.run("\(raw: texts[0])")
            _ = try await database.run("\(raw: texts.last!)")
            #expect(await database.statementNames() == KeptStatementCounts(kept: KeptStatementNames.limit, unnamedRuns: past + 1))
        }
    }

    @Test("SQLite reports no statement names: it keeps every statement it has run")
    func sqliteHasNoStatementNames() async throws {
        try await withDatabase(.sqlite) { database in
            #expect(await database.statementNames() == nil)
        }
    }

    @Test("a PostgreSQL pool opens its connections on demand, up to its size, and closes each after its idle lifetime",
          arguments: Engine.available.filter { $0 == .postgres })
    func postgresPoolOpensOnDemandAndClosesIdle(engine: Engine) async throws {
        let scratch = try await ScratchDatabase.make(engine)
        let admin = try await PostgresDatabase.connect(
            url: try #require(Engine.postgresURL), connectionWait: ScratchDatabase.busyWait, logger: testLogger)
        do {
            try await Self.checkPools(url: try #require(scratch.postgresURL), admin: admin)
        } catch {
            await admin.close()
            await scratch.destroy()
            throw error
        }
        await admin.close()
        await scratch.destroy()
    }

    private static func checkPools(url: String, admin: any Database) async throws {
        let name = String(try #require(URLComponents(string: url)?.path.dropFirst()))
        @Sendable func open() async throws -> Int {
            try await admin.first(
                "SELECT count(*)::bigint AS n FROM pg_stat_activity WHERE datname = \(name)", column: "n", as: Int.self) ?? 0
        }
        // Up to 30 s: the pool's idle timers run as tasks, which a fully loaded machine (the
        // whole suite at its busiest, as on CI) runs late; a pool that never closes still fails.
        @Sendable func waitFor(_ wanted: Int) async throws -> Int {
            var seen = try await open()
            let deadline = ContinuousClock.now + .seconds(30)
            while seen != wanted, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                seen = try await open()
            }
            return seen
        }

        // Nothing is kept open below the pool's size (a kept minimum crashes the driver when the
        // database comes back after an outage): one statement at a time needs one connection.
        let pool = try await PostgresDatabase.connect(
            url: url, poolSize: 5, connectionWait: ScratchDatabase.busyWait, idleLifetime: .seconds(2), logger: testLogger)
        for _ in 0..<20 { _ = try await pool.run("SELECT 1 AS one") }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await open() == 1)
        // Five at once open five, and no more.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 { group.addTask { _ = try await pool.run("SELECT 1 AS one FROM pg_sleep(0.3)") } }
            try await group.waitForAll()
        }
        #expect(try await open() == 5)
        // Idle past their lifetime, they close.
        #expect(try await waitFor(0) == 0)
        await pool.close()
    }

    @Test("a statement written to a PostgreSQL connection that has closed fails as unavailable within moments, and the pool goes on",
          arguments: Engine.available.filter { $0 == .postgres })
    func postgresStatementOnClosedConnectionGivesUp(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            let postgres = try #require(database as? CountersignPostgresDatabase)
            let clock = ContinuousClock()
            let start = clock.now
            // The driver drops a statement written to a connection that has closed; it never
            // answers and ignores cancellation. The lease is left behind, its caller given up.
            let attempt = Task {
                try await postgres.withConnection(waiting: .seconds(5)) { connection in
                    try await connection.close()
                    _ = try await connection.query("SELECT 1 AS one", logger: testLogger)
                    return true
                }
            }
            let outcome = await Self.settled(attempt, within: .seconds(10))
            let took = clock.now - start
            switch outcome {
            case nil:
                Issue.record("the statement is still waiting 10 s after its connection closed")
            case .success?:
                Issue.record("a statement on a closed connection answered")
            case .failure(let error)?:
                guard case StorageError.unavailable? = error as? StorageError else {
                    Issue.record("unavailable, not \(error)")
                    break
                }
                #expect(took < LeaseDeadlines.lostConnectionGrace + .seconds(3), "given up after \(took)")
            }
            #expect(try await postgres.run("SELECT 1 AS one").count == 1, "the pool opens another connection")
        }
    }

    /// `task`'s result, or nil if it has none within `limit` (the task is then left running).
    private static func settled<Value: Sendable>(
        _ task: Task<Value, any Error>, within limit: Duration
    ) async -> Result<Value, any Error>? {
        let (results, continuation) = AsyncStream.makeStream(of: Result<Value, any Error>?.self)
        Task { continuation.yield(await task.result) }
        Task {
            try? await Task.sleep(for: limit)
            continuation.yield(nil)
        }
        for await result in results { return result }
        return nil
    }

    @Test("a statement PostgreSQL could not prepare, in a transaction already failed, runs once the transaction is over",
          arguments: Engine.available.filter { $0 == .postgres })
    func postgresStatementFailedToPrepareIsNotKeptFailed(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            try await database.run("INSERT INTO server_meta (key, value) VALUES ('twice', 'first')")
            let unseen: SQLStatement = "SELECT value FROM server_meta WHERE key = \("twice") AND value <> \("none")"
            await #expect(throws: PSQLError.self) {
                try await database.transaction { executor in
                    do {
                        try await executor.run("INSERT INTO server_meta (key, value) VALUES ('twice', 'second')")
                    } catch StorageError.uniqueViolation {}
                    // The transaction is aborted: PostgreSQL refuses to prepare anything in it.
                    _ = try await executor.run(unseen)
                }
            }
            for _ in 0..<10 {
                #expect(try await database.run(unseen).first?.string("value") == "first")
            }
        }
    }

    @Test("blobs, nulls, integers and text round-trip", arguments: Engine.available)
    func valuesRoundTrip(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            let bytes = Data((0...255).map { UInt8($0) })
            try await database.run(
                "INSERT INTO server_meta (key, value) VALUES (\("k'?\"é"), \("it's ? a value ✓"))")
            let row = try #require(try await database.run("SELECT key, value FROM server_meta WHERE key = \("k'?\"é")").first)
            #expect(try row.string("value") == "it's ? a value ✓")
            let (tenantID, _) = try await seedTenantAndUser(database)
            try await database.run("UPDATE tenants SET signing_key_sealed = \(bytes) WHERE id = \(tenantID)")
            #expect(try await SQLTenantRepository().sealedSigningKey(tenantID: tenantID, on: database) == bytes)
        }
    }

    @Test("of many concurrent redemptions of one ticket exactly one wins", arguments: Engine.available)
    func ticketRedemptionIsAtomic(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            let (tenantID, userID) = try await seedTenantAndUser(database)
            let date = Date()
            let ticket = EnrollmentTicket(id: Identifier.make("tkt", at: date), tenantID: tenantID, userID: userID,
                                          createdBy: "test", createdAt: date, expiresAt: date.addingTimeInterval(600))
            let repository = SQLEnrollmentTicketRepository()
            try await repository.insert(ticket, secretHash: Secrets.hash("cst_secret"), on: database)
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        try await database.transaction { executor in
                            try await repository.redeem(id: ticket.id, deviceID: "dev_\(index)", at: date, on: executor)
                        }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
            let stored = try #require(try await repository.find(secretHash: Secrets.hash("cst_secret"), on: database))
            #expect(stored.usedAt != nil)
        }
    }

    @Test("an expired ticket cannot be redeemed", arguments: Engine.available)
    func expiredTicketIsNotRedeemed(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            let (tenantID, userID) = try await seedTenantAndUser(database)
            let date = Date()
            let ticket = EnrollmentTicket(id: Identifier.make("tkt", at: date), tenantID: tenantID, userID: userID,
                                          createdBy: "test", createdAt: date, expiresAt: date.addingTimeInterval(60))
            let repository = SQLEnrollmentTicketRepository()
            try await repository.insert(ticket, secretHash: Secrets.hash("cst_old"), on: database)
            #expect(try await repository.redeem(id: ticket.id, deviceID: "dev", at: date.addingTimeInterval(61), on: database) == false)
        }
    }

    @Test("a request nonce is accepted once per device", arguments: Engine.available)
    func nonceReplayIsDetected(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            let devices = SQLDeviceRepository()
            let expiry = Date().addingTimeInterval(300)
            #expect(try await devices.recordNonce(deviceID: "dev_a", nonce: "n1", expiresAt: expiry, on: database))
            #expect(try await devices.recordNonce(deviceID: "dev_a", nonce: "n1", expiresAt: expiry, on: database) == false)
            #expect(try await devices.recordNonce(deviceID: "dev_b", nonce: "n1", expiresAt: expiry, on: database))
            try await devices.purgeNonces(before: expiry.addingTimeInterval(1), on: database)
            #expect(try await devices.recordNonce(deviceID: "dev_a", nonce: "n1", expiresAt: expiry, on: database))
        }
    }

    @Test("lists page by id and the audit log pages newest first", arguments: Engine.available)
    func pagination(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            let (tenantID, _) = try await seedTenantAndUser(database)
            let users = SQLUserRepository()
            let start = Date()
            for index in 0..<5 {
                let date = start.addingTimeInterval(Double(index))
                try await users.insert(
                    User(id: Identifier.make("usr", at: date), tenantID: tenantID, username: "user\(index)",
                         displayName: nil, status: .active, createdAt: date, updatedAt: date), on: database)
            }
            let first = try await users.list(tenantID: tenantID, after: nil, limit: 3, on: database)
            let second = try await users.list(tenantID: tenantID, after: first.last?.id, limit: 3, on: database)
            #expect(first.count == 3 && second.count == 3)
            #expect(Set(first.map(\.id)).isDisjoint(with: second.map(\.id)))
            #expect((first + second).map(\.id) == (first + second).map(\.id).sorted())

            let audit = AuditLog()
            for index in 0..<4 {
                try await audit.record("test.event", actor: "system", tenantID: tenantID, target: ("user", "u\(index)"),
                                       details: ["n": "\(index)"], at: start.addingTimeInterval(Double(index)), on: database)
            }
            let newest = try await SQLAuditRepository().list(tenantID: tenantID, before: nil, limit: 2, on: database)
            #expect(newest.map(\.targetID) == ["u3", "u2"])
            let older = try await SQLAuditRepository().list(tenantID: tenantID, before: newest.last?.id, limit: 2, on: database)
            #expect(older.map(\.targetID) == ["u1", "u0"])
            #expect(older.first?.details == ["n": "1"])
        }
    }

    @Test("deleting a user removes its devices and tickets", arguments: Engine.available)
    func userDeletionCascades(engine: Engine) async throws {
        try await withDatabase(engine) { database in
            let (tenantID, userID) = try await seedTenantAndUser(database)
            let date = Date()
            let key = ECPublicJWK(x: "a", y: "b")
            try await SQLDeviceRepository().insert(
                Device(id: "dev_1", tenantID: tenantID, userID: userID, name: "phone", platform: .ios, signingKey: key,
                       encryptionKey: key, push: nil, pushTokenValid: true, status: .active, createdAt: date,
                       updatedAt: date), on: database)
            try await SQLUserRepository().delete(id: userID, on: database)
            #expect(try await SQLDeviceRepository().find(id: "dev_1", on: database) == nil)
        }
    }
}
