import Foundation
import Synchronization

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

    /// Waits for a child on a thread of its own (`onThreadOfItsOwn`), not on one of the
    /// concurrency pool's: a test that blocked one while its child called a server of this
    /// process, whose handlers run on that pool, could stall every test until a timeout. Every
    /// test waits for its children this way; `runBlocking` and `resultBlocking` are for the few
    /// checks made outside a task (whether a peer is installed at all).
    private static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await onThreadOfItsOwn(body)
    }

    /// `runBlocking`, waited for off the concurrency pool.
    static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) async throws -> String {
        try await offThePool { try runBlocking(executable, arguments, environment: environment) }
    }

    /// `resultBlocking`, waited for off the concurrency pool.
    static func result(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                       input: String? = nil) async throws -> Finished {
        try await offThePool { try resultBlocking(executable, arguments, environment: environment, input: input) }
    }

    /// Runs `executable` and returns its standard output; throws when it fails. Output goes
    /// through files: a blocking pipe read can be interrupted by a signal (EINTR), which
    /// Foundation's `readDataToEndOfFile` turns into a crash.
    static func runBlocking(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> String {
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

    struct Finished: Sendable {
        let status: Int32
        let output: String
    }

    /// Runs `executable` to its end, whatever its status, with standard output and standard
    /// error together. `environment` nil inherits this process's; `input`, when given, is standard input (a pipe
    /// that ends after it). Blocks until the program exits.
    static func resultBlocking(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
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

/// A long-running peer (sshd, radsecproxy) started with posix_spawn, not Foundation's Process:
/// Foundation's child monitor makes a blocking wait on every process it started when any child
/// ends, so a peer that forks children of its own (sshd does, per connection) would stall the
/// next `ChildProcess.run` until the peer stopped. Output goes to /dev/null; stopped by SIGKILL.
final class SpawnedPeer: Sendable {
    let pid: pid_t
    /// Once reaped, the pid may be another process's: it is never signalled again.
    private let reaped = Mutex(false)

    init(_ executable: String, _ arguments: [String], argv0: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        closeInheritedDescriptors(&actions)
        let argv = ([argv0 ?? executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = withDefaultSignals { posix_spawn(&pid, executable, &actions, &$0, argv, environ) }
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EINVAL) }
        self.pid = pid
    }

    /// Whether the peer has ended on its own (it is then reaped, and `stop` does nothing more).
    func hasEnded() -> Bool {
        reaped.withLock { reaped in
            var status: Int32 = 0
            if !reaped && waitpid(pid, &status, WNOHANG) == pid { reaped = true }
            return reaped
        }
    }

    func stop() {
        reaped.withLock { reaped in
            guard !reaped else { return }
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            reaped = true
        }
    }
}

extension ChildProcess {
    /// `result`, but started with posix_spawn and waited for with waitpid, off the concurrency
    /// pool: Foundation learns of a child's end through a monitor that can stall behind another
    /// child of the process (see `SpawnedPeer`), which under a full suite held a PAM login's
    /// pamtester "running" for minutes after it had ended. Standard input from `input`, standard
    /// output and error together.
    /// A child still running after `timeout` is killed (SIGKILL), and its status is 137: no
    /// peer that hangs (a client talking to a socket that never answers) holds a test forever.
    static func spawned(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                        input: String? = nil, timeout: Duration = .seconds(300)) async throws -> Finished {
        try await onThreadOfItsOwn {
            try spawnedBlocking(executable, arguments, environment: environment, input: input, timeout: timeout)
        }
    }

    private static func spawnedBlocking(_ executable: URL, _ arguments: [String], environment: [String: String]?,
                                        input: String?, timeout: Duration) throws -> Finished {
        let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workspace, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: workspace) }
        let inputFile = workspace.appendingPathComponent("stdin")
        let outputFile = workspace.appendingPathComponent("output")
        try Data((input ?? "").utf8).write(to: inputFile)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputFile.path, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        closeInheritedDescriptors(&actions)
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { variables.forEach { free($0) } }
        var pid: pid_t = 0
        let status = withDefaultSignals { posix_spawn(&pid, executable.path, &actions, &$0, argv, variables) }
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EINVAL) }
        var exit: Int32 = 0
        let deadline = ContinuousClock.now + timeout
        while true {
            let waited = waitpid(pid, &exit, WNOHANG)
            if waited == pid || (waited < 0 && errno != EINTR) { break }
            if ContinuousClock.now >= deadline { kill(pid, SIGKILL) }
            usleep(2_000)
        }
        let code: Int32 = (exit & 0x7F) == 0 ? (exit >> 8) & 0xFF : 128 + (exit & 0x7F)
        return Finished(status: code, output: (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "")
    }
}

/// Spawn attributes under which a child starts with every signal at its default and none
/// blocked, whatever the test process did with them: a signal the process ignores (SIGPIPE,
/// or SIGTERM and SIGINT once a server under test has taken them over) stays ignored across
/// exec, so a peer spawned after that did not end on SIGTERM. Call `body` with them, `flags`
/// added (a session of its own, say).
func withDefaultSignals<T>(flags: Int32 = 0, _ body: (inout posix_spawnattr_t) throws -> T) rethrows -> T {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setflags(&attributes, Int16(flags | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigdefault(&attributes, &all)
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    return try body(&attributes)
}

/// Closes, in the child, every descriptor from 3 up: the test process's sockets and pipes are
/// not close-on-exec (Foundation's among them), and a long-lived peer that inherited them kept
/// them open. Foundation's `Process` learns that a child ended when the child's end of a socket
/// pair closes, so a slapd that had inherited that end while an openssl or a `countersign
/// serve` was being started held it open for its whole life: `waitUntilExit` never returned,
/// on one of the concurrency pool's two threads, and the suite stopped. A listening socket of a
/// test server inherited the same way answered a peer's connection in the server's place.
/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34); where it is missing, each open
/// descriptor is closed by name.
func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        return
    }
    let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for descriptor in open.compactMap(Int32.init) where descriptor > 2 {
        posix_spawn_file_actions_addclose(&actions, descriptor)
    }
}
