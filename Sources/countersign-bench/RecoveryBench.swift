import ArgumentParser
import CountersignServer
import Foundation

/// What a recovery code or access pass costs the server to check: one salted scrypt hash
/// (N = 2^15, r = 8, p = 1) on its pool of one thread per core, alone and with many tries at once, and the
/// memory the hashes in flight take.
struct RecoveryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery", abstract: "Benchmark the slow hash of recovery codes and access passes.")

    @Option(help: "Hashes to time one after another.") var hashes = 20
    @Option(help: "Tries checked at once, for the throughput.") var concurrent = 64

    func run() async throws {
        print("Countersign recovery bench: \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let secret = RecoverySecret.generate(groups: 3)
        let stored = try await RecoveryHash.make(secret)
        var times: [Double] = []
        for _ in 0..<hashes {
            let start = ContinuousClock.now
            _ = try await RecoveryHash.matches(secret, stored)
            times.append((ContinuousClock.now - start).milliseconds)
        }
        times.sort()
        print("one check (scrypt N=2^15 r=8 p=1, 32 MiB): n=\(hashes) p50=\(format(times[times.count / 2])) ms max=\(format(times.last ?? 0)) ms")

        let before = ProcessMemory.resetPeak()
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<concurrent {
                group.addTask {
                    _ = try await RecoveryHash.matches(index == 0 ? secret : RecoverySecret.generate(groups: 3), stored)
                }
            }
            try await group.waitForAll()
        }
        let elapsed = (ContinuousClock.now - start).milliseconds
        let peak = ProcessMemory.peakBytes()
        print("\(concurrent) checks at once: \(format(elapsed)) ms, \(format(Double(concurrent) / (elapsed / 1000))) checks/s; "
              + "resident memory \(mebibytes(before)) MiB before, peak \(mebibytes(peak)) MiB while hashing")
    }

    private func mebibytes(_ bytes: Int?) -> String {
        bytes.map { format(Double($0) / 1_048_576) } ?? "?"
    }
}
