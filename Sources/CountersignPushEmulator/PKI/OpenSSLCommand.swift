import Foundation

/// The `openssl` command line, run through `Process`.
///
/// Certificates for the emulators are made with the same tool an operator would use to make
/// real ones, so that what the push senders load is exactly what they will meet in production
/// (PEM from `openssl req`, PKCS#12 from `openssl pkcs12 -export`), not a format our own code
/// happened to write.
enum OpenSSLCommand {
    /// The executable, looked up once on `PATH`.
    static let executable: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent("openssl") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Runs `openssl arguments…` in `directory` and waits for it.
    ///
    /// `secrets` are added to the child's environment only, where `-passout env:NAME` reads
    /// them: a password on the command line would show in `ps` and in any error we raise.
    static func run(_ arguments: [String], in directory: URL, secrets: [String: String] = [:]) throws {
        guard let executable else { throw EmulatorError.openSSLUnavailable }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var environment = ProcessInfo.processInfo.environment
        environment.merge(secrets) { _, secret in secret }
        process.environment = environment
        // Standard error goes to a file rather than a pipe: a pipe that fills up while we wait
        // for the process to end would block both of us.
        let errorLog = directory.appendingPathComponent(".openssl-stderr-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: errorLog.path, contents: nil) else {
            throw EmulatorError.file(path: errorLog.path, reason: "cannot be created")
        }
        defer { try? FileManager.default.removeItem(at: errorLog) }
        let errorHandle = try FileHandle(forWritingTo: errorLog)
        defer { try? errorHandle.close() }
        process.standardError = errorHandle
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let standardError = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
            throw EmulatorError.openSSLFailed(
                arguments: arguments, status: process.terminationStatus,
                standardError: standardError.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}
