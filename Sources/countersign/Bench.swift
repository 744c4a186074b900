import ArgumentParser
import Foundation

/// `countersign bench`, which ran the benchmarks until they became an executable of their own,
/// `countersign-bench` (same subcommands, options and output), so that the binary operators run
/// does not carry them. It only says where they went, and fails: a script that still runs the
/// old command stops at once instead of recording no figures.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Moved: the benchmarks are the countersign-bench executable.", shouldDisplay: false)

    /// Whatever followed `bench`, taken so that every old command line gets this answer. Not
    /// echoed: it may hold an admin key.
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []

    func run() throws {
        FileHandle.standardError.write(Data("""
            countersign bench has moved: the benchmarks are the countersign-bench executable, with the same \
            subcommands, options and output (countersign-bench loop …, countersign-bench soak …). Build it \
            with `swift build -c release --product countersign-bench` and run .build/release/countersign-bench.

            """.utf8))
        throw ExitCode.validationFailure
    }
}
