import Foundation

/// A program run as a child process: the command line under test, the compiler, openssl, curl,
/// an independent verifier.
enum ChildProcess {
    struct Failure: Error, CustomStringConvertible {
        var status: Int32
        var standardError: String
        var description: String { "exited with \(status): \(standardError)" }
    }

    /// The executable `name` on PATH.
    static func find(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// `run` on a thread of its own, so that waiting for the child holds up no Swift task.
    static func runDetached(_ executable: URL, _ arguments: [String]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                continuation.resume(with: Result { _ = try run(executable, arguments) })
            }
        }
    }

    /// Runs `executable` and returns its standard output; throws when it fails. Output goes
    /// through files: a blocking pipe read can be interrupted by a signal (EINTR), which
    /// Foundation's `readDataToEndOfFile` turns into a crash.
    static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> String {
        let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workspace, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: workspace) }
        let outputFile = workspace.appendingPathComponent("stdout")
        let errorFile = workspace.appendingPathComponent("stderr")
        try Data().write(to: outputFile)
        try Data().write(to: errorFile)
        let output = try FileHandle(forWritingTo: outputFile)
        let errors = try FileHandle(forWritingTo: errorFile)
        defer {
            try? output.close()
            try? errors.close()
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(status: process.terminationStatus,
                          standardError: (try? String(contentsOf: errorFile, encoding: .utf8)) ?? "")
        }
        return try String(contentsOf: outputFile, encoding: .utf8)
    }

    struct Finished {
        let status: Int32
        let output: String
    }

    /// Runs `executable` to its end, whatever its status, with standard output and standard
    /// error together. `environment` nil inherits this process's; `input`, when given, is standard input (a pipe
    /// that ends after it). Blocks until the program exits.
    static func result(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                       input: String? = nil) throws -> Finished {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let typed = input.map { _ in Pipe() }
        if let typed { process.standardInput = typed }
        try process.run()
        if let typed, let input {
            typed.fileHandleForWriting.write(Data(input.utf8))
            try typed.fileHandleForWriting.close()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Finished(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
