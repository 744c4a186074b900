import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// `countersign-bench loop` and `countersign-bench soak` run against a `countersign serve` of
/// their own, as BENCHMARKS.md runs them: what they print, and the plot and samples the soak
/// writes; and `countersign bench`, which only says where the benchmarks went.
@Suite("countersign-bench against a server in its own process")
struct BenchCommandTests {
    /// The executable the build puts beside `countersign` and the tests.
    static let executable: URL? = {
        if let executable = BuildProducts.benchExecutable { return executable }
        FileHandle.standardError.write(Data("note: the countersign-bench executable is not built beside the tests; its tests are SKIPPED\n".utf8))
        return nil
    }()

    static let enabled = (CommandLineTests.executable != nil && executable != nil) || ProcessInfo.processInfo.environment["CI"] == "true"

    /// Runs `countersign-bench` to its end.
    private static func run(_ arguments: [String], environment: [String: String]) async throws -> CommandLineTests.Run {
        guard let executable else {
            throw CommandLineTests.RunFailure(description: "the countersign-bench executable is not built beside the tests")
        }
        let finished = try await ChildProcess.result(
            executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        return CommandLineTests.Run(status: finished.status, output: finished.output)
    }

    /// A server on a free port in a scratch directory, and the environment that reaches it.
    private static func withServer(
        serverEnvironment: [String: String] = [:], _ body: (URL, [String: String], Process) async throws -> Void
    ) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (server, serverURL, stdout, _) = try await CommandLineTests.serve(
            dataDirectory: scratch.appendingPathComponent("data").path, in: scratch, name: "server",
            environment: serverEnvironment)
        defer { if server.isRunning { server.terminate() } }
        let environment = ["COUNTERSIGN_SERVER": serverURL, "COUNTERSIGN_ADMIN_KEY": try CommandLineTests.adminKey(printedTo: stdout)]
        try await body(scratch, environment, server)
        server.terminate()
        server.waitUntilExit()
    }

    /// glibc's arenas other than the main one in a process: each is a heap mapped on a 64 MiB
    /// boundary (its reserved size), with nothing behind it but anonymous memory.
    private static func mallocArenaHeaps(of pid: Int32) throws -> Int {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        return maps.split(separator: "\n").filter { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 5, let dash = fields[0].firstIndex(of: "-"),
                  let start = UInt64(fields[0][..<dash], radix: 16),
                  let end = UInt64(fields[0][fields[0].index(after: dash)...], radix: 16) else { return false }
            return start % (64 << 20) == 0 && end - start <= 64 << 20
        }.count
    }

    @Test("serve holds glibc's allocator to one arena per core, unless MALLOC_ARENA_MAX says otherwise",
          .enabled(if: enabled && FileManager.default.fileExists(atPath: "/proc/self/maps")))
    func serveLimitsMallocArenas() async throws {
        let cores = max(ProcessInfo.processInfo.activeProcessorCount, 1)
        var heaps: [Int] = []
        // The second server has glibc's own default, eight arenas per core.
        for serverEnvironment in [[:], ["MALLOC_ARENA_MAX": "\(8 * cores)"]] {
            try await Self.withServer(serverEnvironment: serverEnvironment) { _, environment, server in
                // Requests on many threads at once: each thread that allocates takes an arena of
                // its own while the limit allows.
                let run = try await Self.run(
                    ["loop", "--server", environment["COUNTERSIGN_SERVER"]!, "--loops", "64", "--concurrency", "32"],
                    environment: environment)
                #expect(run.status == 0, "\(run.output)")
                heaps.append(try Self.mallocArenaHeaps(of: server.processIdentifier))
            }
        }
        #expect(heaps[0] <= cores - 1, "\(heaps[0]) arenas besides the main one on \(cores) cores")
        // The server runs more threads than cores, so without the limit it has more arenas.
        #expect(heaps[1] > cores - 1, "without the limit: \(heaps[1]) arenas besides the main one on \(cores) cores")
    }

    /// A process's anonymous memory (heap and stacks), in KiB.
    private static func anonymousKiB(of pid: Int32) throws -> Int {
        let rollup = try String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8)
        let line = try #require(rollup.split(separator: "\n").first { $0.hasPrefix("Anonymous:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test("serve gives its allocator's free memory back every --memory-return-interval seconds; with 0 it keeps it",
          .enabled(if: enabled && FileManager.default.fileExists(atPath: "/proc/self/smaps_rollup")))
    func serveReturnsFreeMemory() async throws {
        // Anonymous memory after the same burst of loops, with free memory never returned, then
        // returned every second. Measured: about 33 MiB against 23 on the debug build, 31–32
        // against 22 on the release build. The second server is given up to ten seconds, for a
        // machine busy with other tests.
        var kept: [Int] = []
        for seconds in [0, 1] {
            try await Self.withServer(serverEnvironment: ["COUNTERSIGN_MEMORY_RETURN_INTERVAL": "\(seconds)"]) { _, environment, server in
                let run = try await Self.run(
                    ["loop", "--server", environment["COUNTERSIGN_SERVER"]!, "--loops", "400", "--concurrency", "128"],
                    environment: environment)
                #expect(run.status == 0, "\(run.output)")
                try await Task.sleep(for: .seconds(3))
                var anonymous = try Self.anonymousKiB(of: server.processIdentifier)
                let deadline = ContinuousClock.now + .seconds(7)
                while seconds > 0, anonymous + 4096 >= kept[0], ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(250))
                    anonymous = try Self.anonymousKiB(of: server.processIdentifier)
                }
                kept.append(anonymous)
            }
        }
        #expect(kept[1] + 4096 < kept[0], "never returned: \(kept[0]) KiB; returned every second: \(kept[1]) KiB")
    }

    @Test("loop --server runs its loops and reports throughput, latency and the CPU per loop", .enabled(if: enabled))
    func loopAgainstARunningServer() async throws {
        try await Self.withServer { _, environment, _ in
            let run = try await Self.run(
                ["loop", "--server", environment["COUNTERSIGN_SERVER"]!, "--loops", "12", "--concurrency", "2"],
                environment: environment)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("loops: n=12 concurrency=2 throughput="), "\(run.output)")
            #expect(run.output.contains("ms per loop in the server"), "\(run.output)")
            #expect(run.output.contains(" HTTP requests ("), "\(run.output)")
        }
    }

    @Test("soak writes its samples as CSV and the memory curves, with seconds on a short run's axis, as well-formed SVG",
          .enabled(if: enabled))
    func soakWritesItsPlotAndSamples() async throws {
        try await Self.withServer { scratch, environment, _ in
            let plot = scratch.appendingPathComponent("soak.svg")
            let run = try await Self.run(
                ["soak", "--server", environment["COUNTERSIGN_SERVER"]!, "--duration", "6", "--rate", "4",
                 "--users", "2", "--sample-every", "2", "--plot", plot.path],
                environment: environment)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("resident memory: "), "\(run.output)")
            #expect(run.output.contains("anonymous memory (heap and stacks): "), "\(run.output)")

            // The samples: one before the load, then one every two seconds.
            let csv = try String(contentsOf: scratch.appendingPathComponent("soak.csv"), encoding: .utf8)
            let lines = csv.split(separator: "\n").map(String.init)
            #expect(lines.first == "seconds,resident_mib,anonymous_mib,server_cpu_seconds,loops,late,sqlite_page_cache_mib")
            let rows = lines.dropFirst().map { $0.split(separator: ",").compactMap { Double($0) } }
            try #require(rows.count >= 3 && rows.allSatisfy { $0.count == 7 }, "\(csv)")
            #expect(rows[0][0] == 0 && rows[0][4] == 0, "the first sample is taken before the load")
            #expect(zip(rows, rows.dropFirst()).allSatisfy { $0[0] < $1[0] && $0[4] <= $1[4] }, "time and loops only go up")
            #expect(rows.allSatisfy { $0[1] > $0[2] && $0[2] > 0 }, "resident memory holds the anonymous memory")
            #expect(rows.allSatisfy { $0[6] > 0 && $0[6] < $0[2] }, "the server runs on SQLite, whose page cache is in its heap")
            #expect((rows.last?[4] ?? 0) >= 4, "loops ran (24 asked; fewer on a loaded machine): \(csv)")

            let svg = try SVGOutline(parsing: Data(contentsOf: plot))
            #expect(svg.polylinePointCounts == [rows.count, rows.count, rows.count],
                    "resident, anonymous and page cache curves, a point per sample")
            #expect(svg.texts.contains("resident") && svg.texts.contains("anonymous (heap and stacks)")
                    && svg.texts.contains("SQLite page cache (part of anonymous)"), "the legend names all three")
            let ticks = svg.texts.filter { $0.hasSuffix(" s") }
            #expect(ticks.count == 7 && Set(ticks).count == 7, "seven distinct time ticks in seconds: \(svg.texts)")
            #expect(!svg.texts.contains("0 min"))
        }
    }

    @Test("soak refuses a rate of zero before it starts", .enabled(if: enabled))
    func soakRefusesAZeroRate() async throws {
        let run = try await Self.run(
            ["soak", "--server", "http://127.0.0.1:9", "--rate", "0"], environment: ["COUNTERSIGN_ADMIN_KEY": "key_x.y"])
        #expect(run.status != 0)
        #expect(run.output.contains("--duration, --rate, --users and --sample-every must be positive"), "\(run.output)")
    }

    @Test("countersign bench says the benchmarks are countersign-bench and fails, without echoing what followed it",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func benchInTheCommandLinePointsToCountersignBench() async throws {
        for arguments in [["bench"], ["bench", "loop", "--loops", "12", "--admin-key", "key_bench.secret"]] {
            let run = try await CommandLineTests.run(arguments, environment: [:])
            #expect(run.status != 0, "\(arguments): \(run.output)")
            #expect(run.output.contains("countersign-bench loop"), "\(arguments): \(run.output)")
            #expect(!run.output.contains("key_bench.secret"), "\(arguments): \(run.output)")
        }
    }

    @Test("countersign's help no longer lists bench",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func commandLineHelpLeavesBenchOut() async throws {
        let run = try await CommandLineTests.run(["--help"], environment: [:])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("recover-admin-key"), "\(run.output)")
        #expect(!run.output.contains("bench"), "\(run.output)")
    }
}

/// What a test reads from an SVG document, parsed as XML: the number of points of each
/// polyline, and the text of each `text` element.
private final class SVGOutline: NSObject, XMLParserDelegate {
    private(set) var polylinePointCounts: [Int] = []
    private(set) var texts: [String] = []
    private var text: String?

    init(parsing data: Data) throws {
        super.init()
        let parser = XMLParser(data: data)
        parser.delegate = self
        guard parser.parse() else {
            throw CommandLineTests.RunFailure(description: "the SVG is not well-formed XML: \(String(describing: parser.parserError))")
        }
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if name == "polyline" { polylinePointCounts.append(attributes["points", default: ""].split(separator: " ").count) }
        if name == "text" { text = "" }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text? += string
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "text", let text { texts.append(text) }
        text = nil
    }
}
