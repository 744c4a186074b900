import Foundation
import Synchronization
import Testing
@testable import CountersignServer

/// PostgreSQL goes away under a running server (a TCP proxy between them is cut) and comes
/// back. Requests must fail within the configured wait with a 503 a client can act on, not
/// hang for a minute and then fail as 500s; readiness must say so at once; and once the
/// database is back, everything works again without a restart.
@Suite("Database outage")
struct DatabaseOutageTests {
    static let wait: Duration = .seconds(2)
    /// Time on top of a bound for a loaded machine.
    static let slack: Duration = .seconds(2)

    // The limit only stops a hung run: it counts from the test's start, which includes waiting
    // for a server slot behind the rest of the suite (minutes on a slower machine); the bounds
    // that matter are asserted step by step below.
    @Test("while PostgreSQL is unreachable, requests fail fast with 503 and Retry-After, and succeed again once it is back",
          .timeLimit(.minutes(10)), arguments: Engine.available.filter { $0 == .postgres })
    func outageFailsFastAndRecovers(engine: Engine) async throws {
        let url = try #require(Engine.postgresURL)
        let target = try #require(URLComponents(string: url))
        let proxy = try await TCPProxy.start(to: try #require(target.host), port: target.port ?? 5432)
        let capture = LogCapture()
        var watchdog: Task<Void, Never>?
        defer { watchdog?.cancel() }
        do {
            try await TestServer.with(engine, logger: capture.logger(), configure: { configuration in
                configuration.databaseURL = configuration.databaseURL.map(proxy.route)
                configuration.databaseConnectionWait = Self.wait
            }) { server in
                watchdog = Self.watch(capture)
                // A node just started may take a moment to open its pool: ready within seconds.
                #expect(try await Self.ready(server, within: .seconds(10)), "/readyz is not 200 10 seconds after the server started")
                #expect(try await server.admin("GET", "/admin/v1/tenants").status == 200)

                proxy.cut()
                // Each step is written to stderr, and the watchdog writes the server's log if
                // the test stalls: runs of it once stopped for good in the server's stop, where
                // a dispatcher waited on a statement the driver had dropped (written to a
                // connection that had just closed; `PostgresDatabase.withConnection`).
                FileHandle.standardError.write(Data("OUTAGE-PROGRESS cut\n".utf8))
                let clock = ContinuousClock()

                var start = clock.now
                let readiness = try await server.call("GET", "/readyz")
                FileHandle.standardError.write(Data("OUTAGE-PROGRESS readyz answered\n".utf8))
                #expect(readiness.status == 503)
                #expect(clock.now - start < PostgresDatabase.readinessWait + Self.slack)

                start = clock.now
                let token = try await server.call(
                    "POST", "/token", body: Data("grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba&auth_req_id=x".utf8),
                    headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic Y2xpZW50OnNlY3JldA=="])
                #expect(clock.now - start < Self.wait + Self.slack)
                #expect(token.status == 503)
                FileHandle.standardError.write(Data("OUTAGE-PROGRESS token answered\n".utf8))
                #expect(token.error == "temporarily_unavailable")
                #expect(token.header("Retry-After") != nil)
                #expect(token.header("Cache-Control") == "no-store")

                start = clock.now
                let admin = try await server.admin("GET", "/admin/v1/tenants")
                FileHandle.standardError.write(Data("OUTAGE-PROGRESS admin answered\n".utf8))
                #expect(clock.now - start < Self.wait + Self.slack)
                #expect(admin.status == 503)
                #expect(admin.error == "temporarily_unavailable")
                #expect(admin.header("Retry-After") != nil)

                // The dispatchers poll every second; an outage is one error line each, not one a round.
                try await Task.sleep(for: .seconds(3))
                let outboxErrors = capture.logged(atLeast: .error).filter { $0.message.contains("could not be read") }
                let messages = outboxErrors.map { String($0.message.prefix { $0 != "[" }) }
                #expect(Set(messages).count == messages.count, "an outbox read failure is logged at error once: \(messages)")

                proxy.restore()
                FileHandle.standardError.write(Data("OUTAGE-PROGRESS restored\n".utf8))
                #expect(try await Self.ready(server, within: .seconds(20)), "/readyz is still 503 20 seconds after the database came back")
                FileHandle.standardError.write(Data("OUTAGE-PROGRESS ready again\n".utf8))
                #expect(try await server.admin("GET", "/admin/v1/tenants").status == 200)
                FileHandle.standardError.write(Data("OUTAGE-PROGRESS admin answered again\n".utf8))
                let recovered = clock.now + .seconds(10)
                // Each dispatcher logs its own recovery when its next round reads its outbox.
                while clock.now < recovered,
                      !capture.logged(atLeast: .notice).contains(where: { $0.message.contains("the push outbox could not be read for") }) {
                    try await Task.sleep(for: .milliseconds(200))
                }
                #expect(capture.logged(atLeast: .notice).contains { $0.message.contains("the push outbox could not be read for") },
                        "the end of the outage is logged")
                // Past this mark the server is stopped and its scratch database dropped.
                FileHandle.standardError.write(Data("OUTAGE-PROGRESS checks done\n".utf8))
            }
        } catch {
            await proxy.stop()
            throw error
        }
        FileHandle.standardError.write(Data("OUTAGE-PROGRESS server stopped\n".utf8))
        await proxy.stop()
        FileHandle.standardError.write(Data("OUTAGE-PROGRESS proxy stopped\n".utf8))
    }

    // A node of a cluster at a database failover: the pool loses every connection while
    // requests keep coming, and is handed new leases the moment PostgreSQL is back. A pool
    // that kept a minimum of connections open crashed the process there (the driver refills
    // its minimum only at its start, and traps at the first lease that needs a new connection
    // while it is below it), 3 times in 3 on a real PostgreSQL restart with 8 loops at once;
    // one request at a time, as above, never did.
    @Test("PostgreSQL going away and coming back under 8 concurrent loops leaves the server serving",
          .timeLimit(.minutes(10)), arguments: Engine.available.filter { $0 == .postgres })
    func outageUnderConcurrentLoadRecovers(engine: Engine) async throws {
        let url = try #require(Engine.postgresURL)
        let target = try #require(URLComponents(string: url))
        let proxy = try await TCPProxy.start(to: try #require(target.host), port: target.port ?? 5432)
        do {
            try await TestServer.with(engine, configure: { configuration in
                configuration.databaseURL = configuration.databaseURL.map(proxy.route)
                configuration.databaseConnectionWait = Self.wait
            }) { server in
                #expect(try await Self.ready(server, within: .seconds(10)), "/readyz is not 200 10 seconds after the server started")
                let client = try await server.createClient()
                let loops = LoadLoops()
                let clock = ContinuousClock()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for loop in 0..<8 {
                        group.addTask {
                            while !loops.stopped {
                                let answer = loop % 2 == 0
                                    ? try await server.admin("GET", "/admin/v1/tenants/default/users?limit=1")
                                    : try await server.form("/token", [
                                        ("grant_type", "urn:openid:params:grant-type:ciba"), ("auth_req_id", "unknown"),
                                    ], basic: client)
                                loops.record(answer.status, at: clock.now)
                            }
                        }
                    }
                    try await Task.sleep(for: .seconds(1))
                    proxy.cut()
                    let cut = clock.now
                    try await Task.sleep(for: .seconds(8))
                    proxy.restore()
                    let restored = clock.now
                    // Readiness is asked beside the loops, which go on through the return.
                    let ready = try await Self.ready(server, within: .seconds(30))
                    try await Task.sleep(for: .seconds(3))
                    loops.stop()
                    try await group.waitForAll()
                    #expect(ready, "/readyz is still 503 30 seconds after the database came back")
                    let answers = loops.answers
                    #expect(answers.contains { $0.at > cut && $0.at < restored && $0.status == 503 },
                            "the outage was not seen: no 503 while the database was away")
                    // After the return: admin reads answer 200, unknown auth_req_ids 400.
                    #expect(answers.contains { $0.at > restored && ($0.status == 200 || $0.status == 400) },
                            "no request succeeded after the database came back")
                    let unexpected = answers.filter { ![200, 400, 503].contains($0.status) }.map(\.status)
                    #expect(unexpected.isEmpty, "answers other than 200, 400 and 503: \(unexpected)")
                }
                #expect(try await server.admin("GET", "/admin/v1/tenants/default/users?limit=1").status == 200)
            }
        } catch {
            await proxy.stop()
            throw error
        }
        await proxy.stop()
    }

    // The pool at the moment PostgreSQL is back: statements queued through the outage take the
    // first connections, and the next ones need new connections at once. A pool that kept a
    // minimum open trapped there (PostgresNIO 1.33.2 refills its minimum only at its start, and
    // `createNewDemandConnectionIfPossible` requires the minimum to be open), killing the process.
    @Test("a pool whose database goes away and comes back with 16 statements queued serves them all, and more",
          .timeLimit(.minutes(5)), arguments: Engine.available.filter { $0 == .postgres })
    func poolRecoversWithStatementsQueued(engine: Engine) async throws {
        let url = try #require(Engine.postgresURL)
        let target = try #require(URLComponents(string: url))
        let proxy = try await TCPProxy.start(to: try #require(target.host), port: target.port ?? 5432)
        let scratch = try await ScratchDatabase.make(engine)
        do {
            let database = try await PostgresDatabase.connect(
                url: proxy.route(try #require(scratch.postgresURL)), poolSize: 4, connectionWait: .seconds(20),
                logger: testLogger)
            let loops = LoadLoops()
            let clock = ContinuousClock()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        while !loops.stopped {
                            let ran = (try? await database.run("SELECT 1 AS one FROM pg_sleep(0.02)")) != nil
                            loops.record(ran ? 200 : 503, at: clock.now)
                        }
                    }
                }
                try await Task.sleep(for: .seconds(1))
                proxy.cut()
                try await Task.sleep(for: .seconds(3))
                proxy.restore()
                let restored = clock.now
                try await Task.sleep(for: .seconds(5))
                loops.stop()
                try await group.waitForAll()
                #expect(loops.answers.filter { $0.at > restored && $0.status == 200 }.count > 16,
                        "the statements queued through the outage, and more, ran once the database was back")
            }
            #expect(try await database.run("SELECT 1 AS one").count == 1)
            await database.close()
        } catch {
            await proxy.stop()
            await scratch.destroy()
            throw error
        }
        await proxy.stop()
        await scratch.destroy()
    }

    /// The answers of the loops of `outageUnderConcurrentLoadRecovers`, and their stop.
    private final class LoadLoops: Sendable {
        private let state = Mutex<(stopped: Bool, answers: [(status: Int, at: ContinuousClock.Instant)])>((false, []))

        var stopped: Bool { state.withLock { $0.stopped } }
        var answers: [(status: Int, at: ContinuousClock.Instant)] { state.withLock { $0.answers } }
        func stop() { state.withLock { $0.stopped = true } }
        func record(_ status: Int, at instant: ContinuousClock.Instant) {
            state.withLock { $0.answers.append((status, instant)) }
        }
    }

    /// Whether `/readyz` answers 200 within `limit`, asked every 200 ms.
    static func ready(_ server: TestServer, within limit: Duration) async throws -> Bool {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if try await server.call("GET", "/readyz").status == 200 { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    /// Writes what the server logged (debug and up: the pool's and the service group's steps
    /// among them) to stderr if the test is still running a minute and a half after the server
    /// started, and again after five minutes: the test takes about 15 s, and a run that stalls
    /// then says where its server was.
    static func watch(_ capture: LogCapture) -> Task<Void, Never> {
        Task.detached {
            for after in [Duration.seconds(90), .seconds(210)] {
                guard (try? await Task.sleep(for: after)) != nil else { return }
                // Without the pool's keep-alive lines, which would fill it.
                let lines = capture.logged(atLeast: .trace).filter { !$0.message.hasPrefix("run ping pong") }
                    .suffix(300).map { "OUTAGE-LOG [\($0.level)] \($0.message)" }
                FileHandle.standardError.write(Data(("OUTAGE-PROGRESS stalled; the server's last log lines:\n"
                    + lines.joined(separator: "\n") + "\n").utf8))
            }
        }
    }
}
