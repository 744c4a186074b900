import Foundation
import Synchronization
import Testing

/// `countersign device watch` as the README shows it, typed at: the real `countersign serve`,
/// alice enrolled with `countersign device enroll`, and the watch on a pseudo-terminal of its
/// own, asked by `countersign ciba auth --wait` from another process.
@Suite("device watch on a terminal")
struct DeviceWatchTerminalTests {
    static let enabled = CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"

    /// A server with alice enrolled on a terminal authenticator and a poll client to ask her.
    final class Scene: Sendable {
        let scratch: URL
        let server: Process
        let environment: [String: String]
        let clientID: String
        /// The `ciba auth` processes still running.
        private let asking = Mutex<[pid_t]>([])

        init(scratch: URL, server: Process, environment: [String: String], clientID: String) {
            self.scratch = scratch
            self.server = server
            self.environment = environment
            self.clientID = clientID
        }

        static func make() async throws -> Scene {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-watch-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let (server, serverURL, stdout, _) = try await CommandLineTests.serve(
                dataDirectory: scratch.appendingPathComponent("data").path, in: scratch, name: "server")
            var environment = ["COUNTERSIGN_SERVER": serverURL, "COUNTERSIGN_ADMIN_KEY": try CommandLineTests.adminKey(printedTo: stdout),
                               "COUNTERSIGN_DEVICE_STORE": scratch.appendingPathComponent("device").path]
            let user = try CommandLineTests.run(["admin", "user", "create", "alice"], environment: environment)
            let userID = try #require((try JSONSerialization.jsonObject(with: Data(user.output.utf8)) as? [String: Any])?["id"] as? String)
            let uri = try CommandLineTests.run(["admin", "enroll", userID, "--uri-only"], environment: environment)
            let enrolled = try CommandLineTests.run(
                ["device", "enroll", uri.output.trimmingCharacters(in: .whitespacesAndNewlines), "--name", "terminal"],
                environment: environment)
            #expect(enrolled.status == 0, "\(enrolled.output)")
            let created = try CommandLineTests.run(["admin", "client", "create", "--name", "Demo portal"], environment: environment)
            let client = try #require(try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any])
            let clientID = try #require((client["client"] as? [String: Any])?["client_id"] as? String)
            environment["COUNTERSIGN_CLIENT_SECRET"] = try #require(client["client_secret"] as? String)
            return Scene(scratch: scratch, server: server, environment: environment, clientID: clientID)
        }

        /// `countersign device watch` on a terminal of its own, once it says it is watching.
        func watch(_ arguments: [String] = []) async throws -> PseudoTerminal {
            let terminal = try PseudoTerminal(
                try CommandLineTests.requireExecutable(), arguments: ["device", "watch"] + arguments,
                environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }.merging(["TERM": "dumb"]) { $1 })
            try await terminal.waitFor("Ctrl-C to stop.")
            return terminal
        }

        /// `ciba auth --wait` for alice, in the background: it returns once she has answered.
        /// `end()` stops it, should a test fail before she does.
        func askAlice(_ message: String) throws -> Task<CommandLineTests.Run, Never> {
            let process = Process()
            process.executableURL = try CommandLineTests.requireExecutable()
            process.arguments = ["ciba", "auth", "--client-id", clientID, "--user", "alice", "--binding-message", message, "--wait"]
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let pid = process.processIdentifier
            asking.withLock { $0.append(pid) }
            return Task {
                await withCheckedContinuation { continuation in
                    // Reading blocks a thread until the process ends: not one of those that run tasks.
                    DispatchQueue.global().async {
                        let data = output.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        self.asking.withLock { $0.removeAll { $0 == pid } }
                        continuation.resume(returning: CommandLineTests.Run(
                            status: process.terminationStatus, output: String(decoding: data, as: UTF8.self)))
                    }
                }
            }
        }

        func end() {
            for pid in asking.withLock({ $0 }) {
                kill(pid, SIGTERM)
            }
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
            try? FileManager.default.removeItem(at: scratch)
        }
    }

    @Test("y typed at the prompt approves, and one Ctrl-C stops the watch", .enabled(if: enabled))
    func typingYApproves() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let terminal = try await scene.watch()
        defer { terminal.end() }

        let asked = try scene.askAlice("Sign in to Demo portal")
        try await terminal.waitFor("Approve? [y/N] ")
        terminal.type("y\r")
        let auth = await asked.value
        #expect(auth.status == 0, "\(auth.output)")
        #expect(auth.output.contains("\"access_token\""), "\(auth.output)")
        let screen = try await terminal.waitFor(": approved at")
        #expect(screen.contains("Sign in to Demo portal"))

        terminal.type("\u{3}")
        let status = try await terminal.exit(within: .seconds(10))
        #expect(status == 0, "\(terminal.screen)")
        #expect(terminal.screen.contains("Stopped."))
    }

    @Test("n typed at the prompt denies as declined", .enabled(if: enabled))
    func typingNDenies() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let terminal = try await scene.watch()
        defer { terminal.end() }

        let asked = try scene.askAlice("Sign in to Demo portal")
        try await terminal.waitFor("Approve? [y/N] ")
        terminal.type("n\r")
        let auth = await asked.value
        #expect(auth.status != 0)
        #expect(auth.output.contains("access_denied"), "\(auth.output)")
        try await terminal.waitFor(": denied (declined) at")
        terminal.type("\u{3}")
        #expect(try await terminal.exit(within: .seconds(10)) == 0, "\(terminal.screen)")
    }

    @Test("an answer typed before its prompt does not answer it, and the user is told", .enabled(if: enabled))
    func answerTypedEarlyIsNotUsed() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let terminal = try await scene.watch()
        defer { terminal.end() }

        terminal.type("y\r")
        try await terminal.waitFor("“y” was typed while no question was asked; it answers nothing.")
        // Half a line, whose Enter would come after the prompt.
        terminal.type("y")
        let asked = try scene.askAlice("Sign in to Demo portal")
        try await terminal.waitFor("Approve? [y/N] ")
        let screen = try await terminal.waitFor("“y” was typed before the question below, and does not answer it.")
        #expect(!screen.contains("approved"), "\(screen)")
        terminal.type("\r")
        let auth = await asked.value
        #expect(auth.output.contains("access_denied"), "an empty answer denies: \(auth.output)")
        try await terminal.waitFor(": denied (declined) at")
        terminal.type("\u{3}")
        #expect(try await terminal.exit(within: .seconds(10)) == 0, "\(terminal.screen)")
    }

    @Test("a request answered elsewhere withdraws its question; the next one is asked without an Enter first",
          .enabled(if: enabled))
    func requestAnsweredElsewhereWithdrawsItsQuestion() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let terminal = try await scene.watch()
        defer { terminal.end() }

        let first = try scene.askAlice("First sign-in")
        try await terminal.waitFor("Approve? [y/N] ")
        let pending = try CommandLineTests.run(["device", "pending"], environment: scene.environment)
        let requestID = try #require(pending.output.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("txn_") })
        let denied = try CommandLineTests.run(["device", "deny", String(requestID)], environment: scene.environment)
        #expect(denied.status == 0, "\(denied.output)")
        try await terminal.waitFor("\(requestID) is now denied (answered elsewhere, or expired).")
        #expect(await first.value.output.contains("access_denied"))

        let second = try scene.askAlice("Second sign-in")
        try await terminal.waitFor("Approve? [y/N] ", times: 2)
        terminal.type("y\r")
        #expect(await second.value.status == 0)
        try await terminal.waitFor(": approved at")
        terminal.type("\u{3}")
        #expect(try await terminal.exit(within: .seconds(10)) == 0, "\(terminal.screen)")
    }

    @Test("a watch waiting for requests uses next to no CPU", .enabled(if: enabled), arguments: [[], ["--auto", "approve"]])
    func idleWatchDoesNotSpin(arguments: [String]) async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let terminal = try await scene.watch(arguments)
        defer { terminal.end() }

        try await Task.sleep(for: .seconds(1))
        let before = try terminal.cpuTime()
        let window = Duration.seconds(4)
        try await Task.sleep(for: window)
        let used = try terminal.cpuTime() - before
        // Spinning, it took 40% of a core; waiting, it takes a few milliseconds for keepalives.
        #expect(used < window * 0.05, "device watch \(arguments) used \(used) of CPU in \(window)")
        terminal.type("\u{3}")
        #expect(try await terminal.exit(within: .seconds(10)) == 0, "\(terminal.screen)")
    }
}
