import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program run on a pseudo-terminal of its own, as a user runs it in a terminal window: its
/// standard input, output and error are the terminal, which is also its controlling terminal,
/// so that a typed Ctrl-C reaches it as SIGINT through the terminal's line discipline, and
/// `isatty` is true for it.
final class PseudoTerminal: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let pid: pid_t
    private let master: Int32
    private let output = Mutex<[UInt8]>([])
    private let exitStatus = Mutex<Int32?>(nil)
    /// Set once the reader has taken everything the program wrote (the terminal closed).
    private let drained = Mutex(false)

    init(_ executable: URL, arguments: [String], environment: [String: String]) throws {
        guard let openTerminal = Self.function("posix_openpt", as: OpenFunction.self),
              let grant = Self.function("grantpt", as: TerminalFunction.self),
              let unlock = Self.function("unlockpt", as: TerminalFunction.self),
              let terminalName = Self.function("ptsname_r", as: NameFunction.self) else {
            throw Failure(description: "the C library has no posix_openpt, grantpt, unlockpt or ptsname_r")
        }
        master = openTerminal(O_RDWR | O_NOCTTY)
        guard master >= 0, grant(master) == 0, unlock(master) == 0 else {
            throw Failure(description: "no pseudo-terminal: errno \(errno)")
        }
        var name = [CChar](repeating: 0, count: 256)
        guard terminalName(master, &name, name.count) == 0 else {
            Glibc.close(master)
            throw Failure(description: "ptsname: errno \(errno)")
        }

        // A session of its own: the terminal opened as its standard input then becomes its
        // controlling terminal. Signals start at their defaults and unblocked, whatever the test
        // process does with them (`withDefaultSignals`).
        let setSession: Int32 = 0x80  // POSIX_SPAWN_SETSID, which the Glibc module does not export

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addclose(&actions, master)
        posix_spawn_file_actions_addopen(&actions, 0, name, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        closeInheritedDescriptors(&actions)

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let spawned = withDefaultSignals(flags: setSession) { posix_spawn(&child, executable.path, &actions, &$0, argv, envp) }
        guard spawned == 0 else {
            Glibc.close(master)
            throw Failure(description: "posix_spawn \(executable.path): error \(spawned)")
        }
        pid = child
        Thread.detachNewThread { [self] in readUntilTheEnd() }
    }

    // The Glibc module leaves out the pseudo-terminal functions (they sit behind feature macros),
    // so they are looked up in the C library by name.
    private typealias OpenFunction = @convention(c) (Int32) -> Int32
    private typealias TerminalFunction = @convention(c) (Int32) -> Int32
    private typealias NameFunction = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32

    private static func function<Function>(_ name: String, as type: Function.Type) -> Function? {
        dlsym(nil, name).map { unsafeBitCast($0, to: type) }
    }

    /// Collects everything the program writes, until the terminal closes with its last holder
    /// (the program); then closes it here, so that no descriptor is closed while still read.
    private func readUntilTheEnd() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(master, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            output.withLock { $0 += buffer[0..<count] }
        }
        Glibc.close(master)
        drained.withLock { $0 = true }
    }

    /// Everything written so far, as text.
    var screen: String {
        output.withLock { String(decoding: $0, as: UTF8.self) }
    }

    /// Types `text` (a return is "\r", Ctrl-C "\u{3}").
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Waits until the screen shows `text` `times` times, and returns the screen.
    @discardableResult
    func waitFor(_ text: String, times: Int = 1, within limit: Duration = .seconds(30)) async throws -> String {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let shown = screen
            if shown.components(separatedBy: text).count - 1 >= times { return shown }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Failure(description: "the screen never showed \(text.debugDescription) \(times) time(s):\n\(screen)")
    }

    /// The program's exit status once it has exited within `limit`, else nil.
    func exit(within limit: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let status = reap() {
                // What the program wrote last ("Stopped.") may still be on its way to the
                // reader: the screen is complete once the terminal has closed.
                while !drained.withLock({ $0 }), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                return status
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    private func reap() -> Int32? {
        exitStatus.withLock { known in
            if let known { return known }
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
            // WIFEXITED / WEXITSTATUS, which Swift does not import as macros.
            known = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            return known
        }
    }

    /// CPU time the program has used, user and system, from /proc.
    func cpuTime() throws -> Duration {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The fields after the command name, which is in parentheses and may hold spaces.
        guard let end = stat.lastIndex(of: ")") else { throw Failure(description: "unreadable /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else {
            throw Failure(description: "unreadable /proc/\(pid)/stat: \(stat)")
        }
        return .milliseconds((user + system) * 1000 / sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Ends the program if it still runs; the terminal then closes.
    func end() {
        guard reap() == nil else { return }
        kill(pid, SIGKILL)
        exitStatus.withLock { known in
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            known = 128 + SIGKILL
        }
    }
}
