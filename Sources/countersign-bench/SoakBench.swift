import ArgumentParser
import CountersignCommandLine
import CountersignCore
import CountersignKit
import CountersignServer
import Foundation
import Logging
import Synchronization

/// `countersign-bench soak`: approval loops at a steady rate for a long time against a server
/// in its own process, sampling the server's resident memory and CPU time from its `/metrics`.
/// It writes the samples as CSV and the resident and anonymous memory curves (with SQLite's page
/// cache on SQLite) as an SVG plot, and reports the growth between the first and the last
/// quarter of the run.
struct SoakBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Run approval loops at a steady rate against a running server and plot its resident memory.")

    @Option(help: "The running server's URL (its resident memory is what is measured).") var server: String
    @Option(name: .customLong("admin-key"), help: "Admin key for --server (COUNTERSIGN_ADMIN_KEY).") var adminKey: String?
    @Option(help: "How long to run, in seconds.") var duration = 3600
    @Option(help: "Approval loops per second.") var rate = 20.0
    @Option(help: "Users, each with one device; a user has at most one loop in flight.") var users = 16
    @Option(name: .customLong("sample-every"), help: "Seconds between samples of the server's /metrics.") var sampleEvery = 10
    @Option(help: "Where to write the memory plot (SVG); the samples go beside it as .csv.") var plot = "soak.svg"

    func validate() throws {
        guard duration >= 1, rate > 0, users >= 1, sampleEvery >= 1 else {
            throw ValidationError("--duration, --rate, --users and --sample-every must be positive")
        }
    }

    func run() async throws {
        Bench.quietLogging()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-soak-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let target = try await BenchTarget.start(
            server: server, adminKey: setting(adminKey, "COUNTERSIGN_ADMIN_KEY"), databaseURL: nil, scratch: scratch)
        print("Countersign soak: \(target.description), \(format(rate)) loops/s for \(duration) s, \(users) users")
        let transport = NIOTransport(connections: 2 * users + 16)
        let admin = AdminAPIClient(base: target.base, key: target.adminKey)
        let policy = try await BenchPolicy.lift(admin)
        let fixture = try await LoopFixture.make(target: target, users: users, transport: transport, scratch: scratch)
        let devices = try await fixture.startDevices()
        _ = try await fixture.run(loops: users, concurrency: users, devices: devices)

        let progress = SoakProgress()
        let start = ContinuousClock.now
        let end = start + .seconds(duration)
        var samples: [SoakSample] = []
        let first = try await ServerCounters.read(target.base)
        samples.append(SoakSample(seconds: 0, residentBytes: first.residentBytes ?? 0, anonymousBytes: first.anonymousBytes ?? 0,
                                  cpuSeconds: 0, loops: 0, late: 0, pageCacheBytes: first.pageCacheBytes ?? 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Each user starts a loop every users/rate seconds, staggered, so that the loops
            // arrive evenly at `rate` a second; a loop that would start late starts at once.
            let interval = Duration.seconds(Double(users) / rate)
            for worker in 0..<users {
                group.addTask {
                    var next = start + interval * (Double(worker) / Double(users))
                    while next < end {
                        if ContinuousClock.now < next {
                            try await Task.sleep(until: next, clock: .continuous)
                        } else if ContinuousClock.now - next > interval {
                            progress.late()
                        }
                        let authReqID = try await fixture.client.authorize(username: fixture.users[worker].username)
                        try await devices.waitForApproval(worker)
                        _ = try await fixture.client.tokens(authReqID)
                        progress.completed()
                        next += interval
                    }
                }
            }
            while ContinuousClock.now < end {
                try await Task.sleep(for: .seconds(min(sampleEvery, max(1, Int((end - ContinuousClock.now).components.seconds)))))
                let counters = try await ServerCounters.read(target.base)
                let sample = SoakSample(
                    seconds: (ContinuousClock.now - start).milliseconds / 1000, residentBytes: counters.residentBytes ?? 0,
                    anonymousBytes: counters.anonymousBytes ?? 0, cpuSeconds: (counters.cpuSeconds ?? 0) - (first.cpuSeconds ?? 0), loops: progress.loops, late: progress.lateLoops,
                    pageCacheBytes: counters.pageCacheBytes ?? 0)
                samples.append(sample)
                print("  \(Int(sample.seconds)) s: \(sample.loops) loops, resident \(format(sample.residentBytes / 1_048_576)) MiB " +
                      "(anonymous \(format(sample.anonymousBytes / 1_048_576)) MiB, SQLite page cache \(format(sample.pageCacheBytes / 1_048_576)) MiB), " +
                      "server cpu \(format(sample.cpuSeconds)) s")
            }
            try await group.waitForAll()
        }
        await devices.stop()
        try await policy.restore(admin)
        try await transport.shutdown()

        let summary = SoakSummary(samples)
        print(summary.text(rate: rate))
        let plotURL = URL(fileURLWithPath: plot)
        try SoakPlot.svg(samples, summary: summary, title: "Countersign server memory, \(format(rate)) approval loops/s")
            .write(to: plotURL, atomically: true, encoding: .utf8)
        let csv = "seconds,resident_mib,anonymous_mib,server_cpu_seconds,loops,late,sqlite_page_cache_mib\n" + samples.map {
            "\(format($0.seconds)),\(format($0.residentBytes / 1_048_576)),\(format($0.anonymousBytes / 1_048_576)),\(format($0.cpuSeconds)),\($0.loops),\($0.late),\(format($0.pageCacheBytes / 1_048_576))"
        }.joined(separator: "\n") + "\n"
        try csv.write(to: plotURL.deletingPathExtension().appendingPathExtension("csv"), atomically: true, encoding: .utf8)
        print("plot: \(plotURL.path); samples: \(plotURL.deletingPathExtension().appendingPathExtension("csv").path)")
    }
}

/// Loops completed so far, and those that started later than their slot.
final class SoakProgress: Sendable {
    private let counts = Mutex<(loops: Int, late: Int)>((0, 0))
    var loops: Int { counts.withLock { $0.loops } }
    var lateLoops: Int { counts.withLock { $0.late } }
    func completed() { counts.withLock { $0.loops += 1 } }
    func late() { counts.withLock { $0.late += 1 } }
}

struct SoakSample: Sendable {
    var seconds: Double
    var residentBytes: Double
    /// The anonymous part of `residentBytes`: heap and stacks, without the code pages.
    var anonymousBytes: Double
    var cpuSeconds: Double
    var loops: Int
    var late: Int
    /// SQLite's page cache (`countersign_sqlite_page_cache_bytes`); 0 on PostgreSQL.
    var pageCacheBytes: Double = 0
}

/// What the samples say: the rate reached, the CPU per loop, and resident memory at the start,
/// its extremes, and the growth from the first quarter of the run to the last (means of each).
struct SoakSummary {
    let seconds: Double
    let loops: Int
    let late: Int
    let cpuPerLoop: Double
    let firstMiB: Double
    let minimumMiB: Double
    let maximumMiB: Double
    let lastMiB: Double
    let firstQuarterMiB: Double
    let lastQuarterMiB: Double
    /// The anonymous memory's means over the first and last quarters, and at the start and end.
    let firstAnonymousMiB: Double
    let lastAnonymousMiB: Double
    let firstQuarterAnonymousMiB: Double
    let lastQuarterAnonymousMiB: Double

    init(_ samples: [SoakSample]) {
        let last = samples.last ?? SoakSample(seconds: 0, residentBytes: 0, anonymousBytes: 0, cpuSeconds: 0, loops: 0, late: 0)
        seconds = last.seconds
        loops = last.loops
        late = last.late
        cpuPerLoop = last.loops > 0 ? last.cpuSeconds / Double(last.loops) : 0
        let mebibytes = samples.map { $0.residentBytes / 1_048_576 }
        firstMiB = mebibytes.first ?? 0
        minimumMiB = mebibytes.min() ?? 0
        maximumMiB = mebibytes.max() ?? 0
        lastMiB = mebibytes.last ?? 0
        func mean(_ values: some Collection<Double>) -> Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }
        // The first sample is taken before the soak's own load: the quarters are of the samples after it.
        let running = Array(mebibytes.dropFirst())
        let quarter = max(1, running.count / 4)
        firstQuarterMiB = mean(running.prefix(quarter))
        lastQuarterMiB = mean(running.suffix(quarter))
        let anonymous = samples.map { $0.anonymousBytes / 1_048_576 }
        firstAnonymousMiB = anonymous.first ?? 0
        lastAnonymousMiB = anonymous.last ?? 0
        firstQuarterAnonymousMiB = mean(anonymous.dropFirst().prefix(quarter))
        lastQuarterAnonymousMiB = mean(anonymous.dropFirst().suffix(quarter))
    }

    func text(rate: Double) -> String {
        """
        soak: \(loops) loops in \(format(seconds)) s (\(format(Double(loops) / max(seconds, 1))) loops/s of \(format(rate)) asked; \(late) started late), \
        server cpu \(format(cpuPerLoop * 1000)) ms per loop
        resident memory: \(format(firstMiB)) MiB before the load, \(format(minimumMiB))–\(format(maximumMiB)) MiB during it, \
        \(format(lastMiB)) MiB at the end; mean of the first quarter \(format(firstQuarterMiB)) MiB, of the last \
        \(format(lastQuarterMiB)) MiB (\(lastQuarterMiB >= firstQuarterMiB ? "+" : "")\(format(lastQuarterMiB - firstQuarterMiB)) MiB)
        anonymous memory (heap and stacks): \(format(firstAnonymousMiB)) MiB before the load, \(format(lastAnonymousMiB)) MiB at the end; \
        mean of the first quarter \(format(firstQuarterAnonymousMiB)) MiB, of the last \(format(lastQuarterAnonymousMiB)) MiB \
        (\(lastQuarterAnonymousMiB >= firstQuarterAnonymousMiB ? "+" : "")\(format(lastQuarterAnonymousMiB - firstQuarterAnonymousMiB)) MiB)
        """
    }
}

/// The resident and anonymous memory curves (and SQLite's page cache, part of the anonymous
/// memory, on SQLite) as a self-contained SVG: time on x, MiB on y from 0,
/// with grid lines, labels, a legend and the summary as a caption.
enum SoakPlot {
    static func svg(_ samples: [SoakSample], summary: SoakSummary, title: String) -> String {
        let width = 800.0, height = 420.0
        let left = 70.0, right = 20.0, top = 40.0, bottom = 70.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let maxSeconds = max(samples.last?.seconds ?? 1, 1)
        let maxMiB = niceCeiling(max(summary.maximumMiB * 1.1, 1))
        func x(_ seconds: Double) -> Double { left + seconds / maxSeconds * plotWidth }
        func y(_ mebibytes: Double) -> Double { top + plotHeight - mebibytes / maxMiB * plotHeight }
        var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(Int(width / 2))" y="22" text-anchor="middle" font-size="15">\(escape(title))</text>

        """
        for step in 0...5 {
            let mebibytes = maxMiB * Double(step) / 5
            svg += "<line x1=\"\(f(left))\" y1=\"\(f(y(mebibytes)))\" x2=\"\(f(width - right))\" y2=\"\(f(y(mebibytes)))\" stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(f(left - 8))\" y=\"\(f(y(mebibytes) + 4))\" text-anchor=\"end\">\(Int(mebibytes.rounded())) MiB</text>\n"
        }
        for step in 0...6 {
            let seconds = maxSeconds * Double(step) / 6
            svg += "<line x1=\"\(f(x(seconds)))\" y1=\"\(f(top))\" x2=\"\(f(x(seconds)))\" y2=\"\(f(top + plotHeight))\" stroke=\"#eee\"/>\n"
            svg += "<text x=\"\(f(x(seconds)))\" y=\"\(f(top + plotHeight + 18))\" text-anchor=\"middle\">\(time(seconds, span: maxSeconds))</text>\n"
        }
        // Each curve, and its line in the legend at the top left.
        // SQLite's page cache only where the server has one.
        let drawn = curves.filter { $0.bytes != \SoakSample.pageCacheBytes || samples.contains { $0.pageCacheBytes > 0 } }
        for (row, curve) in drawn.enumerated() {
            let points = samples.map { "\(f(x($0.seconds))),\(f(y($0[keyPath: curve.bytes] / 1_048_576)))" }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(curve.colour)\" stroke-width=\"2\" points=\"\(points)\"/>\n"
            let lineY = top + 14 + Double(row) * 16
            svg += "<line x1=\"\(f(left + 10))\" y1=\"\(f(lineY - 4))\" x2=\"\(f(left + 30))\" y2=\"\(f(lineY - 4))\" stroke=\"\(curve.colour)\" stroke-width=\"2\"/>\n"
            svg += "<text x=\"\(f(left + 36))\" y=\"\(f(lineY))\">\(curve.label)</text>\n"
        }
        svg += "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotWidth))\" height=\"\(f(plotHeight))\" fill=\"none\" stroke=\"#888\"/>\n"
        let caption = "\(summary.loops) loops in \(time(summary.seconds, span: summary.seconds)); resident \(format(summary.minimumMiB))–\(format(summary.maximumMiB)) MiB; " +
            "first quarter \(format(summary.firstQuarterMiB)) MiB, last quarter \(format(summary.lastQuarterMiB)) MiB"
        let anonymousCaption = "anonymous \(format(summary.firstAnonymousMiB)) MiB before the load, " +
            "first quarter \(format(summary.firstQuarterAnonymousMiB)) MiB, last quarter \(format(summary.lastQuarterAnonymousMiB)) MiB, " +
            "\(format(summary.lastAnonymousMiB)) MiB at the end"
        svg += "<text x=\"\(f(left))\" y=\"\(f(height - 34))\">\(escape(caption))</text>\n"
        svg += "<text x=\"\(f(left))\" y=\"\(f(height - 16))\">\(escape(anonymousCaption))</text>\n</svg>\n"
        return svg
    }

    /// The curves drawn: which bytes of a sample, their name in the legend, their colour.
    private static let curves: [(bytes: KeyPath<SoakSample, Double> & Sendable, label: String, colour: String)] = [
        (\.residentBytes, "resident", "#1f5fbf"),
        (\.anonymousBytes, "anonymous (heap and stacks)", "#d9731a"),
        (\.pageCacheBytes, "SQLite page cache (part of anonymous)", "#2e8b57"),
    ]

    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    /// A time on the axis: whole minutes on runs of ten minutes or more, seconds on shorter ones,
    /// whose ticks would otherwise all read "0 min".
    private static func time(_ seconds: Double, span: Double) -> String {
        span >= 600 ? "\(Int((seconds / 60).rounded())) min" : "\(Int(seconds.rounded())) s"
    }

    /// 1, 2 or 5 times a power of ten, at least `value`.
    private static func niceCeiling(_ value: Double) -> Double {
        let power = pow(10, floor(log10(value)))
        for factor in [1.0, 2.0, 5.0, 10.0] where factor * power >= value { return factor * power }
        return 10 * power
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }
}
