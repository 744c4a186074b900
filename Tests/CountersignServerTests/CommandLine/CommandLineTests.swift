import Foundation
import Testing

/// The README's walk-through, run with the real `countersign` executable: a server started by
/// `countersign serve`, administered by `countersign admin`, enrolled by `countersign device`,
/// and stopped by SIGTERM.
@Suite("The countersign command")
struct CommandLineTests {
    /// The executable `swift test` builds beside the test bundle.
    static let executable: URL? = {
        if let directory = BuildProducts.directory { return directory.appendingPathComponent("countersign") }
        FileHandle.standardError.write(Data("note: the countersign executable is not built beside the tests; the command-line walk-through is SKIPPED\n".utf8))
        return nil
    }()

    static func requireExecutable() throws -> URL {
        guard let executable else {
            throw RunFailure(description: "the countersign executable is not built beside the tests")
        }
        return executable
    }

    struct Run {
        let status: Int32
        let output: String
    }

    /// Runs the executable to its end. `input`, when given, is its standard input (a pipe that
    /// ends after it); `unset` names variables of this process it does not inherit.
    static func run(
        _ arguments: [String], environment: [String: String], input: String? = nil, unset: Set<String> = []
    ) async throws -> Run {
        let finished = try await ChildProcess.result(
            try Self.requireExecutable(), arguments,
            environment: ProcessInfo.processInfo.environment.filter { !unset.contains($0.key) }.merging(environment) { $1 },
            input: input)
        return Run(status: finished.status, output: finished.output)
    }

    @Test("serve, create a user, enroll the terminal authenticator, list, unenroll, stop on SIGTERM",
          .enabled(if: executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func readmeWalkthrough() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let dataDirectory = scratch.appendingPathComponent("data").path
        let (server, serverURL, stdout, stderr) = try await Self.serve(dataDirectory: dataDirectory, in: scratch, name: "first")
        defer { if server.isRunning { server.terminate() } }
        let adminKey = try Self.adminKey(printedTo: stdout)
        let store = scratch.appendingPathComponent("device").path
        let environment = ["COUNTERSIGN_SERVER": serverURL, "COUNTERSIGN_ADMIN_KEY": adminKey, "COUNTERSIGN_DEVICE_STORE": store]

        let user = try await Self.run(["admin", "user", "create", "alice", "--display-name", "Alice Liddell"], environment: environment)
        #expect(user.status == 0, "\(user.output)")
        let userObject = try #require(try JSONSerialization.jsonObject(with: Data(user.output.utf8)) as? [String: Any])
        let userID = try #require(userObject["id"] as? String)

        let shown = try await Self.run(["admin", "enroll", userID], environment: environment)
        #expect(shown.status == 0)
        #expect(shown.output.contains("▀") || shown.output.contains("█"), "a QR code is printed")
        let uri = try await Self.run(["admin", "enroll", userID, "--uri-only"], environment: environment)
        let enrollmentURI = uri.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(enrollmentURI.hasPrefix("countersign://enroll?"))

        let enrolled = try await Self.run(["device", "enroll", enrollmentURI, "--name", "terminal"], environment: environment)
        #expect(enrolled.status == 0, "\(enrolled.output)")
        #expect(enrolled.output.contains("Enrolled terminal for alice"))
        let reused = try await Self.run(["device", "enroll", enrollmentURI], environment: environment)
        #expect(reused.status != 0)
        #expect(reused.output.contains("ticket_used"))

        let listed = try await Self.run(["device", "list"], environment: environment)
        #expect(listed.output.contains("alice (Alice Liddell)"))
        let enrollmentID = try #require(listed.output.split(separator: "\n").first.map(String.init))
        let devices = try await Self.run(["admin", "device", "list", userID], environment: environment)
        #expect(devices.output.contains("\"name\" : \"terminal\""))

        let unenrolled = try await Self.run(["device", "unenroll", enrollmentID], environment: environment)
        #expect(unenrolled.status == 0, "\(unenrolled.output)")
        #expect(try await Self.run(["device", "list"], environment: environment).output.contains("No enrollments."))

        let denied = try await Self.run(["admin", "user", "list"], environment: environment.merging(["COUNTERSIGN_ADMIN_KEY": "key_x.y"]) { $1 })
        #expect(denied.status != 0)
        #expect(denied.output.contains("401 invalid_token"))

        server.terminate()  // SIGTERM
        server.waitUntilExit()
        #expect(server.terminationStatus == 0)
        #expect(try String(contentsOf: stderr, encoding: .utf8).contains("stopped"))

        // An operator who lost every key issues a new one from the data directory, and it works.
        #expect(try await Self.run(["recover-admin-key", "--data-dir", dataDirectory, "--name", ""], environment: [:]).status != 0)
        let recovered = try await Self.run(["recover-admin-key", "--data-dir", dataDirectory, "--log-level", "error"], environment: [:])
        #expect(recovered.status == 0, "\(recovered.output)")
        let recoveredKey = try #require(recovered.output.split(separator: "'").dropFirst().first.map(String.init))
        #expect(recoveredKey != adminKey)
        let (restarted, restartedURL, _, _) = try await Self.serve(dataDirectory: dataDirectory, in: scratch, name: "second")
        defer { if restarted.isRunning { restarted.terminate() } }
        let keys = try await Self.run(
            ["admin", "key", "list", "--system"], environment: ["COUNTERSIGN_SERVER": restartedURL, "COUNTERSIGN_ADMIN_KEY": recoveredKey])
        #expect(keys.status == 0, "\(keys.output)")
        #expect(keys.output.contains("\"created_by\" : \"recovery\""))
        restarted.terminate()
        restarted.waitUntilExit()
    }

    @Test("ciba auth waits while device watch approves; a wrong secret is invalid_client",
          .enabled(if: executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func approvalFromTheTerminal() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (server, serverURL, stdout, _) = try await Self.serve(
            dataDirectory: scratch.appendingPathComponent("data").path, in: scratch, name: "server")
        defer { if server.isRunning { server.terminate() } }
        let adminKey = try Self.adminKey(printedTo: stdout)
        var environment = ["COUNTERSIGN_SERVER": serverURL, "COUNTERSIGN_ADMIN_KEY": adminKey,
                           "COUNTERSIGN_DEVICE_STORE": scratch.appendingPathComponent("device").path]

        let user = try await Self.run(["admin", "user", "create", "alice"], environment: environment)
        let userID = try #require((try JSONSerialization.jsonObject(with: Data(user.output.utf8)) as? [String: Any])?["id"] as? String)
        let uri = try await Self.run(["admin", "enroll", userID, "--uri-only"], environment: environment)
        let enrolled = try await Self.run(
            ["device", "enroll", uri.output.trimmingCharacters(in: .whitespacesAndNewlines), "--name", "terminal"],
            environment: environment)
        #expect(enrolled.status == 0, "\(enrolled.output)")
        let created = try await Self.run(["admin", "client", "create", "--name", "Demo portal"], environment: environment)
        let client = try #require(try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any])
        let clientID = try #require((client["client"] as? [String: Any])?["client_id"] as? String)
        environment["COUNTERSIGN_CLIENT_SECRET"] = try #require(client["client_secret"] as? String)

        let (watcher, watched) = try await Self.watchAndApprove(environment: environment, in: scratch)
        defer { if watcher.isRunning { watcher.terminate() } }

        let auth = try await Self.run(
            ["ciba", "auth", "--client-id", clientID, "--user", "alice", "--binding-message", "Sign in to Demo portal", "--wait"],
            environment: environment)
        #expect(auth.status == 0, "\(auth.output)")
        #expect(auth.output.contains("\"access_token\""))
        #expect(auth.output.contains("\"sub\" : \"\(userID)\""))
        let log = try String(contentsOf: watched, encoding: .utf8)
        #expect(log.contains("Sign in to Demo portal"), "\(log)")
        #expect(log.contains("approved"), "\(log)")

        let wrong = try await Self.run(
            ["ciba", "auth", "--client-id", clientID, "--user", "alice"],
            environment: environment.merging(["COUNTERSIGN_CLIENT_SECRET": "css_wrong"]) { $1 })
        #expect(wrong.status != 0)
        #expect(wrong.output.contains("error: invalid_client"), "\(wrong.output)")
        watcher.terminate()
        server.terminate()
        server.waitUntilExit()
    }

    @Test("admin push sets, shows and deletes push credentials from files",
          .enabled(if: (executable != nil || ProcessInfo.processInfo.environment["CI"] == "true") && PushTestPKI.available))
    func pushCredentialsFromTheTerminal() async throws {
        let pki = try #require(PushTestPKI.shared)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (server, serverURL, stdout, _) = try await Self.serve(
            dataDirectory: scratch.appendingPathComponent("data").path, in: scratch, name: "server")
        defer { if server.isRunning { server.terminate() } }
        let adminKey = try Self.adminKey(printedTo: stdout)
        var environment = ["COUNTERSIGN_SERVER": serverURL, "COUNTERSIGN_ADMIN_KEY": adminKey]

        let key = APNsTestKey()
        let p8 = scratch.appendingPathComponent("AuthKey_ABC123DEFG.p8")
        try key.key.pemRepresentation.write(to: p8, atomically: true, encoding: .utf8)
        let token = try await Self.run(["admin", "push", "set-apns-token", "--key-id", key.keyID, "--team-id", key.teamID,
                                  "--file", p8.path, "--topic", "com.example.bank"], environment: environment)
        #expect(token.status == 0, "\(token.output)")
        #expect(!token.output.contains("PRIVATE KEY"))

        let p12 = scratch.appendingPathComponent("push.p12")
        try pki.clientPKCS12(commonName: "Apple Push Services: com.example.bank", topic: "com.example.bank", password: "s3cret")
            .write(to: p12)
        environment["COUNTERSIGN_APNS_CERTIFICATE_PASSWORD"] = "s3cret"
        let certificate = try await Self.run(["admin", "push", "set-apns-certificate", "bank-ios", "--file", p12.path,
                                        "--topic", "com.example.bank", "--environment", "sandbox"], environment: environment)
        #expect(certificate.status == 0, "\(certificate.output)")
        #expect(certificate.output.contains("Apple Push Services: com.example.bank"))

        let shown = try await Self.run(["admin", "push", "show"], environment: environment)
        #expect(shown.status == 0)
        #expect(shown.output.contains(key.keyID) && shown.output.contains("bank-ios"))
        #expect(!shown.output.contains("s3cret"))

        #expect(try await Self.run(["admin", "push", "delete", "apns-token"], environment: environment).status == 0)
        let missing = try await Self.run(["admin", "push", "delete", "fcm"], environment: environment)
        #expect(missing.status != 0)
        #expect(missing.output.contains("not found"))
        server.terminate()
        server.waitUntilExit()
    }

    @Test("admin policy changes members and keeps the rest; admin webhook shows a new secret once",
          .enabled(if: executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func policyAndWebhooksFromTheTerminal() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (server, serverURL, stdout, _) = try await Self.serve(
            dataDirectory: scratch.appendingPathComponent("data").path, in: scratch, name: "server")
        defer { if server.isRunning { server.terminate() } }
        let environment = ["COUNTERSIGN_SERVER": serverURL, "COUNTERSIGN_ADMIN_KEY": try Self.adminKey(printedTo: stdout)]

        let set = try await Self.run(["admin", "policy", "set", "--pin-attempt-limit", "5", "--minimum-acr",
                                "urn:countersign:acr:number-match", "--number-match-choices", "false",
                                "--push-delivery-allowed", "false", "--client-assertion-max-lifetime-seconds", "3600"],
                               environment: environment)
        #expect(set.status == 0, "\(set.output)")
        let shown = try await Self.run(["admin", "policy", "show"], environment: environment)
        #expect(shown.output.contains("\"pin_attempt_limit\" : 5") && shown.output.contains("number-match"), "\(shown.output)")
        #expect(shown.output.contains("\"push_delivery_allowed\" : false"), "\(shown.output)")
        #expect(shown.output.contains("\"client_assertion_max_lifetime_seconds\" : 3600"), "\(shown.output)")
        #expect(shown.output.contains("\"user_requests_per_minute\" : 5"), "members not given keep their values")
        let bad = try await Self.run(["admin", "policy", "set", "--pin-attempt-limit", "0"], environment: environment)
        #expect(bad.status != 0 && bad.output.contains("pin_attempt_limit"))

        let webhook = try await Self.run(["admin", "webhook", "set", "events", "--url", "https://hooks.example.com/countersign"],
                                   environment: environment)
        #expect(webhook.status == 0 && webhook.output.contains("\"secret\""), "\(webhook.output)")
        let listed = try await Self.run(["admin", "webhook", "show", "events"], environment: environment)
        #expect(listed.output.contains("hooks.example.com") && !listed.output.contains("\"secret\""))
        #expect(try await Self.run(["admin", "webhook", "delete", "events"], environment: environment).status == 0)
        server.terminate()
        server.waitUntilExit()
    }

    /// Starts `countersign device watch --auto approve`, writing to a file in `scratch`, and
    /// returns once it is watching.
    static func watchAndApprove(environment: [String: String], in scratch: URL) async throws -> (Process, URL) {
        let watcher = Process()
        watcher.executableURL = try Self.requireExecutable()
        watcher.arguments = ["device", "watch", "--auto", "approve"]
        watcher.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let watched = scratch.appendingPathComponent("watch.out")
        _ = FileManager.default.createFile(atPath: watched.path, contents: nil)
        watcher.standardOutput = try FileHandle(forWritingTo: watched)
        watcher.standardError = watcher.standardOutput
        try watcher.run()
        do {
            for _ in 0..<100 where !((try? String(contentsOf: watched, encoding: .utf8)) ?? "").contains("Watching") {
                try await Task.sleep(for: .milliseconds(50))
            }
        } catch {
            watcher.terminate()
            throw error
        }
        return (watcher, watched)
    }

    /// The admin key a first start prints.
    static func adminKey(printedTo stdout: URL) throws -> String {
        let banner = try String(contentsOf: stdout, encoding: .utf8)
        let keyLine = try #require(banner.split(separator: "\n").first { $0.contains("COUNTERSIGN_ADMIN_KEY=") })
        return try #require(keyLine.split(separator: "'").dropFirst().first.map(String.init))
    }

    /// Starts `countersign serve` on a free port (or `port`, to start a stopped server again
    /// where its clients know it) and returns it once it names its public URL.
    /// `environment` is added to this process's own.
    static func serve(
        dataDirectory: String, in scratch: URL, name: String, environment: [String: String] = [:], port: Int = 0,
        arguments: [String] = []
    ) async throws -> (Process, String, URL, URL) {
        let stdout = scratch.appendingPathComponent("\(name).out")
        let stderr = scratch.appendingPathComponent("\(name).err")
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        let server = Process()
        server.executableURL = try Self.requireExecutable()
        server.arguments = ["serve", "--port", String(port), "--data-dir", dataDirectory] + arguments
        if !environment.isEmpty {
            server.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        server.standardOutput = try FileHandle(forWritingTo: stdout)
        server.standardError = try FileHandle(forWritingTo: stderr)
        try server.run()
        var base: String?
        for _ in 0..<200 where base == nil {
            try await Task.sleep(for: .milliseconds(100))
            let log = try String(contentsOf: stderr, encoding: .utf8)
            if let range = log.range(of: "public URL ") {
                base = String(log[range.upperBound...].prefix { !$0.isWhitespace })
            }
        }
        let startLog = (try? String(contentsOf: stderr, encoding: .utf8)) ?? ""
        guard let base else {
            server.terminate()
            throw RunFailure(description: "the server did not start: \(startLog)")
        }
        return (server, base, stdout, stderr)
    }

    struct RunFailure: Error, CustomStringConvertible {
        let description: String
    }
}
