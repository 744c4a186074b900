import ArgumentParser
import CountersignCore
import CountersignServer
import Foundation
import Logging

/// `countersign-bench sql`: what the SQL layer costs a statement. The same SELECT (one
/// `approval_transactions` row, all 28 columns), INSERT (21 bound values) and conditional
/// UPDATE … RETURNING run by hand (the statement's text as a constant, the binds as an array,
/// the columns read one by one by name) and as the repositories write them (an interpolated
/// `SQLStatement`, rows decoded as `Decodable`), in alternating rounds, on SQLite in memory,
/// SQLite on disk, and PostgreSQL when --database-url is given.
struct SQLBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql", abstract: "Per-statement cost of the SQL layer against statements run by hand.")

    @Option(help: "Rounds per statement and layer, alternating the layers.") var rounds = 7
    @Option(help: "Statements per round.") var iterations = 2000
    @Option(name: .customLong("database-url"), help: "Also measure this PostgreSQL database (an empty one).") var databaseURL: String?

    func validate() throws {
        guard rounds >= 1, iterations >= 1 else { throw ValidationError("--rounds and --iterations must each be at least 1") }
    }

    func run() async throws {
        Bench.quietLogging()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-sql-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        print("Countersign bench sql: \(rounds) rounds × \(iterations) statements per layer, "
              + "\(ProcessInfo.processInfo.activeProcessorCount) cores; µs per statement, median [min–max] of the rounds")
        let logger = Logger(label: "bench")
        try await measure("SQLite, in memory", try await SQLiteDatabase.open(path: nil, logger: logger))
        try await measure("SQLite, disk (\(scratch.path))",
                          try await SQLiteDatabase.open(path: scratch.appendingPathComponent("bench.sqlite").path, logger: logger))
        if let databaseURL {
            try await measure("PostgreSQL", try await PostgresDatabase.connect(url: databaseURL, logger: logger))
        }
    }

    private func measure(_ engine: String, _ database: any Database) async throws {
        defer { Task { await database.close() } }
        try await Migrations.migrate(database)
        let fixture = try await SQLBenchFixture.make(on: database)
        print(engine)
        let statements: [(String, SQLBenchFixture.Statement, SQLBenchFixture.Statement)] = [
            ("SELECT one row, 28 columns", fixture.selectByHand, fixture.selectTyped),
            ("INSERT one row, 21 binds", fixture.insertByHand, fixture.insertTyped),
            ("UPDATE … RETURNING id", fixture.updateByHand, fixture.updateTyped),
        ]
        for (name, byHand, typed) in statements {
            var handTimes: [Double] = []
            var typedTimes: [Double] = []
            for index in 0..<(iterations / 10) {  // warm-up: caches, prepared statements
                try await byHand(database, rounds * iterations + index)
                try await typed(database, rounds * iterations + index)
            }
            for round in 0..<rounds {
                // Alternate which layer goes first, so that drift on a shared machine falls on both.
                let order = round.isMultiple(of: 2) ? [true, false] : [false, true]
                for byHandFirst in order {
                    let statement = byHandFirst ? byHand : typed
                    let start = ContinuousClock.now
                    for index in 0..<iterations { try await statement(database, round * iterations + index) }
                    let micros = (ContinuousClock.now - start).milliseconds * 1000 / Double(iterations)
                    if byHandFirst { handTimes.append(micros) } else { typedTimes.append(micros) }
                }
            }
            let hand = Spread(handTimes)
            let layer = Spread(typedTimes)
            let overhead = (layer.median - hand.median) / hand.median * 100
            print("  \(name): by hand \(hand), SQLStatement \(layer), layer \(overhead >= 0 ? "+" : "")\(String(format: "%.0f", overhead)) %")
        }
    }

    private struct Spread: CustomStringConvertible {
        let median: Double
        let low: Double
        let high: Double

        init(_ values: [Double]) {
            let sorted = values.sorted()
            median = sorted[sorted.count / 2]
            low = sorted.first ?? 0
            high = sorted.last ?? 0
        }

        var description: String { String(format: "%.1f [%.1f–%.1f]", median, low, high) }
    }
}
