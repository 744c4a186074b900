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
        /// The server process: the first, or the one started again after `stopServer()`.
        private let server: Mutex<Process>
        let environment: [String: String]
        let clientID: String
        /// The `ciba auth` processes still running.
        private let asking = Mutex<[pid_t]>([])

        let userID: String

        init(scratch: URL, server: Process, environment: [String: String], clientID: String, userID: String) {
            self.scratch = scratch
            self.server = Mutex(server)
            self.environment = environment
            self.clientID = clientID
            self.userID = userID
        }

        /// The server's public URL, `http://127.0.0.1:<port>`.
        var serverURL: String { environment["COUNTERSIGN_SERVER"] ?? "" }

        /// Stops the server as an operator does (SIGTERM), and waits until it has exited.
        func stopServer() {
            let process = server.withLock { $0 }
            process.terminate()
            process.waitUntilExit()
        }

        /// Starts the server again on its data and its port, once it listens.
        func startServerAgain() async throws {
            let port = try #require(URL(string: serverURL)?.port)
            let (process, url, _, _) = try await CommandLineTests.serve(
                dataDirectory: scratch.appendingPathComponent("data").path, in: scratch, name: "server-again", port: port)
            server.withLock { $0 = process }
            #expect(url == serverURL)
        }

        /// The id of the one request waiting in alice's inbox, as `device pending` lists it.
        func pendingRequestID() async throws -> String {
            let pending = try await CommandLineTests.run(["device", "pending"], environment: environment)
            return try #require(pending.output.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("txn_") }.map(String.init),
                                "\(pending.output)")
        }

        /// `countersign ciba auth` for alice on a terminal of its own, to read its output as it comes.
        func cibaAuth(_ arguments: [String]) throws -> PseudoTerminal {
            try PseudoTerminal(
                try CommandLineTests.requireExecutable(),
                arguments: ["ciba", "auth", "--client-id", clientID, "--user", "alice"] + arguments,
                environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }.merging(["TERM": "dumb"]) { $1 })
        }

        /// `ciba auth` without waiting: the request's `auth_req_id`, and the number to match if any.
        func sendRequest(_ arguments: [String] = []) async throws -> (authReqID: String, number: String?) {
            let sent = try await CommandLineTests.run(
                ["ciba", "auth", "--client-id", clientID, "--user", "alice"] + arguments, environment: environment)
            #expect(sent.status == 0, "\(sent.output)")
            let words = sent.output.split(whereSeparator: \.isWhitespace)
            let authReqID = try #require(words.firstIndex(of: "auth_req_id").map { String(words[$0 + 1]) }, "\(sent.output)")
            let number = words.firstIndex(of: "match:").map { String(words[$0 + 1]) }
            return (authReqID, number)
        }

        static func make(pin: String? = nil) async throws -> Scene {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-watch-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let (server, serverURL, stdout, _) = try await CommandLineTests.serve(
                dataDirectory: scratch.appendingPathComponent("data").path, in: scratch, name: "server")
            var environment = ["COUNTERSIGN_SERVER": serverURL, "COUNTERSIGN_ADMIN_KEY": try CommandLineTests.adminKey(printedTo: stdout),
                               "COUNTERSIGN_DEVICE_STORE": scratch.appendingPathComponent("device").path]
            let user = try await CommandLineTests.run(["admin", "user", "create", "alice"], environment: environment)
            let userID = try #require((try JSONSerialization.jsonObject(with: Data(user.output.utf8)) as? [String: Any])?["id"] as? String)
            let uri = try await CommandLineTests.run(["admin", "enroll", userID, "--uri-only"], environment: environment)
            let enrolled = try await CommandLineTests.run(
                ["device", "enroll", uri.output.trimmingCharacters(in: .whitespacesAndNewlines), "--name", "terminal"]
                    + (pin == nil ? [] : ["--pin-stdin"]),
                environment: environment, input: pin.map { $0 + "\n" })
            #expect(enrolled.status == 0, "\(enrolled.output)")
            let created = try await CommandLineTests.run(["admin", "client", "create", "--name", "Demo portal"], environment: environment)
            let client = try #require(try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any])
            let clientID = try #require((client["client"] as? [String: Any])?["client_id"] as? String)
            environment["COUNTERSIGN_CLIENT_SECRET"] = try #require(client["client_secret"] as? String)
            return Scene(scratch: scratch, server: server, environment: environment, clientID: clientID, userID: userID)
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
        func askAlice(_ message: String, _ arguments: [String] = []) throws -> Task<CommandLineTests.Run, Never> {
            let process = Process()
            process.executableURL = try CommandLineTests.requireExecutable()
            process.arguments = ["ciba", "auth", "--client-id", clientID, "--user", "alice", "--binding-message", message, "--wait"]
                + arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let pid = process.processIdentifier
            asking.withLock { $0.append(pid) }
            return Task {
                // Reading blocks a thread until the process ends: not one of those that run tasks.
                await onThreadOfItsOwn {
                    let data = output.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    self.asking.withLock { $0.removeAll { $0 == pid } }
                    return CommandLineTests.Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
                }
            }
        }

        func end() {
            for pid in asking.withLock({ $0 }) {
                kill(pid, SIGTERM)
            }
            let process = server.withLock { $0 }
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
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

    @Test("a request denied by another command withdraws its question, saying so; the next one is asked without an Enter first",
          .enabled(if: enabled))
    func requestDeniedByAnotherCommandWithdrawsItsQuestion() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let terminal = try await scene.watch()
        defer { terminal.end() }

        let first = try scene.askAlice("First sign-in")
        try await terminal.waitFor("Approve? [y/N] ")
        let pending = try await CommandLineTests.run(["device", "pending"], environment: scene.environment)
        let requestID = try #require(pending.output.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("txn_") })
        let denied = try await CommandLineTests.run(["device", "deny", String(requestID)], environment: scene.environment)
        #expect(denied.status == 0, "\(denied.output)")
        try await terminal.waitFor("\(requestID) was denied (declined) here with `countersign device deny` at ")
        #expect(await first.value.output.contains("access_denied"))

        let second = try scene.askAlice("Second sign-in")
        try await terminal.waitFor("Approve? [y/N] ", times: 2)
        terminal.type("y\r")
        #expect(await second.value.status == 0)
        try await terminal.waitFor(": approved at")
        terminal.type("\u{3}")
        #expect(try await terminal.exit(within: .seconds(10)) == 0, "\(terminal.screen)")
    }

    @Test("across a server restart the watch says it is back, and asks the open question again", .enabled(if: enabled))
    func restartAsksTheOpenQuestionAgain() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let terminal = try await scene.watch()
        defer { terminal.end() }

        let asked = try scene.askAlice("Sign in across a restart")
        try await terminal.waitFor("Approve? [y/N] ")
        let requestID = try await scene.pendingRequestID()
        scene.stopServer()
        try await terminal.waitFor("the server could not be reached; reconnecting in")
        try await scene.startServerAgain()
        try await terminal.waitFor("alice at \(scene.serverURL): reconnected.", within: .seconds(60))
        let screen = try await terminal.waitFor("Approve? [y/N] ", times: 2)
        let repeated = try #require(screen.components(separatedBy: "reconnected.").last)
        #expect(repeated.contains("\(requestID) is still waiting for your answer:"), "\(screen)")
        #expect(repeated.contains("Sign in across a restart"), "the request is shown again: \(screen)")

        terminal.type("y\r")
        try await terminal.waitFor("\(requestID): approved at")
        let auth = await asked.value
        #expect(auth.status == 0, "ciba auth --wait rides out the restart too: \(auth.output)")
        terminal.type("\u{3}")
        #expect(try await terminal.exit(within: .seconds(10)) == 0, "\(terminal.screen)")
    }

    @Test("a request approved with device approve while the watch asks is said to be approved here, and when",
          .enabled(if: enabled))
    func requestApprovedByAnotherCommandHereSaysSo() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let terminal = try await scene.watch()
        defer { terminal.end() }

        let asked = try scene.askAlice("Sign in to Demo portal")
        try await terminal.waitFor("Approve? [y/N] ")
        let requestID = try await scene.pendingRequestID()
        let approved = try await CommandLineTests.run(["device", "approve", requestID], environment: scene.environment)
        #expect(approved.status == 0, "\(approved.output)")
        let screen = try await terminal.waitFor("\(requestID) was approved here with `countersign device approve` at ")
        #expect(!screen.contains("answered elsewhere") && !screen.contains("on another device"), "\(screen)")
        #expect(await asked.value.status == 0)

        // The watch noted its own answers too: approving again says so instead of "no pending request".
        let next = try scene.askAlice("Second sign-in")
        try await terminal.waitFor("Approve? [y/N] ", times: 2)
        let second = try await scene.pendingRequestID()
        terminal.type("y\r")
        try await terminal.waitFor("\(second): approved at")
        #expect(await next.value.status == 0)
        let again = try await CommandLineTests.run(["device", "approve", second], environment: scene.environment)
        #expect(again.status != 0)
        #expect(again.output.contains("\(second) was already approved here with `countersign device watch` at "), "\(again.output)")
        terminal.type("\u{3}")
        #expect(try await terminal.exit(within: .seconds(10)) == 0, "\(terminal.screen)")
    }

    @Test("a request answered on another device while the watch asks is said to be, and the question withdrawn",
          .enabled(if: enabled))
    func requestAnsweredOnAnotherDeviceSaysSo() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let phone = scene.scratch.appendingPathComponent("phone").path
        let uri = try await CommandLineTests.run(["admin", "enroll", scene.userID, "--uri-only"], environment: scene.environment)
        let enrolled = try await CommandLineTests.run(
            ["device", "enroll", uri.output.trimmingCharacters(in: .whitespacesAndNewlines), "--name", "phone", "--store", phone],
            environment: scene.environment)
        #expect(enrolled.status == 0, "\(enrolled.output)")
        let terminal = try await scene.watch()
        defer { terminal.end() }

        let asked = try scene.askAlice("Sign in to Demo portal")
        try await terminal.waitFor("Approve? [y/N] ")
        let requestID = try await scene.pendingRequestID()
        let approved = try await CommandLineTests.run(["device", "approve", requestID, "--store", phone], environment: scene.environment)
        #expect(approved.status == 0, "\(approved.output)")
        try await terminal.waitFor("\(requestID) was approved on another device.")
        #expect(await asked.value.status == 0)
        terminal.type("\u{3}")
        #expect(try await terminal.exit(within: .seconds(10)) == 0, "\(terminal.screen)")
    }

    @Test("a phone added to the account while the watch runs is said at once, with the command that undoes it",
          .enabled(if: enabled))
    func phoneAddedIsSaid() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let terminal = try await scene.watch()
        defer { terminal.end() }

        let uri = try await CommandLineTests.run(["admin", "enroll", scene.userID, "--uri-only"], environment: scene.environment)
        let enrolled = try await CommandLineTests.run(
            ["device", "enroll", uri.output.trimmingCharacters(in: .whitespacesAndNewlines), "--name", "Unknown phone",
             "--store", scene.scratch.appendingPathComponent("phone").path],
            environment: scene.environment)
        #expect(enrolled.status == 0, "\(enrolled.output)")
        try await terminal.waitFor("A new device, “Unknown phone”, was added to your account.")
        let screen = try await terminal.waitFor("Not you? Run: countersign device not-me ntc_")
        let command = try #require(screen.split(separator: "\n").last { $0.contains("device not-me ntc_") })
        let noticeID = try #require(command.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })

        let reported = try await CommandLineTests.run(["device", "not-me", noticeID], environment: scene.environment)
        #expect(reported.status == 0, "\(reported.output)")
        #expect(reported.output.contains("The device \"Unknown phone\""), "\(reported.output)")
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
