import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// pam_countersign.so in real PAM applications: pamtester for a sudo-like service, OpenSSH's sshd
/// with keyboard-interactive logins from paramiko. The host is enrolled with `countersign pam
/// enroll-host`; the phone is CountersignKit. Runs as root with pamtester, sshd and a C compiler
/// installed (CI), and says so when skipped.
@Suite("PAM module", .serialized)
struct PAMModuleTests {
    static func withHost(
        extra: [String] = [], arguments: [String] = [], _ body: (TestServer, EnrolledHost) async throws -> Void
    ) async throws {
        guard PAMHarness.available else { return }
        try await TestServer.with(.sqlite) { server in
            PAMHarness.catchUp(server.clock)
            let host = try await EnrolledHost.enroll(server, extra: extra, arguments: arguments)
            defer { host.remove() }
            try await body(server, host)
        }
    }

    @Test("sudo through pamtester: the phone is shown the host, user and command line it signs for; approved, the login succeeds")
    func sudoApproved() async throws {
        try await Self.withHost(arguments: ["sudo"]) { server, host in
            let olga = try await server.enrolledUser("olga")
            async let login = host.pamtester("olga")
            let details: RequestDetails
            do {
                details = try await RADIUSServerTests.pending(olga.kit)
            } catch {
                Issue.record("no request reached the phone; pamtester said: \(try await login.output)")
                return
            }
            #expect(details.clientName == "build-host-7")
            let detail = try #require(details.authorizationDetails.first)
            #expect(detail["type"]?.stringValue == "sudo")
            #expect(detail["user"]?.stringValue == "olga")
            #expect(detail["host"]?.stringValue == PAMCommandTestSupport.hostName)
            #expect(detail["command"]?.stringValue?.contains("pamtester -v \(host.service) olga authenticate") == true,
                    "command: \(String(describing: detail["command"]))")
            _ = try await olga.kit.approve(details)
            let finished = try await login
            #expect(finished.status == 0, "\(finished.output)")
            #expect(finished.output.contains("Approve the request on your phone, then press Enter"))
            #expect(finished.output.contains("successfully authenticated"))
        }
    }

    @Test("denied on the phone: the login fails and says why")
    func denied() async throws {
        try await Self.withHost { server, host in
            let piet = try await server.enrolledUser("piet")
            async let login = host.pamtester("piet")
            let details = try await RADIUSServerTests.pending(piet.kit)
            #expect(details.authorizationDetails.first?["type"]?.stringValue == "ssh_login")
            _ = try await piet.kit.deny(details)
            let finished = try await login
            #expect(finished.status != 0 && finished.output.contains("Denied on your phone."), "\(finished.output)")
        }
    }

    @Test("Countersign unreachable: fail_mode secure refuses the login, safe lets it in; both say so")
    func failModes() async throws {
        try await Self.withHost { server, host in
            _ = try await server.enrolledUser("quinn")
            try host.set("server", "http://127.0.0.1:9")
            let secure = try await host.pamtester("quinn")
            #expect(secure.status != 0 && secure.output.contains("Countersign cannot be reached; the login is refused."),
                    "\(secure.output)")
            try host.set("fail_mode", "safe")
            let safe = try await host.pamtester("quinn")
            #expect(safe.status == 0 && safe.output.contains("the login is allowed without approval"), "\(safe.output)")
        }
    }

    @Test("an unknown user is refused; a skipped user is let in without a request; a configuration others may write is refused")
    func usersAndConfiguration() async throws {
        try await Self.withHost { server, host in
            let unknown = try await host.pamtester("nobody-here")
            #expect(unknown.status != 0 && unknown.output.contains("Countersign does not know nobody-here"), "\(unknown.output)")
            let rosa = try await server.enrolledUser("rosa")
            try host.set("skip_users", "rosa")
            let skipped = try await host.pamtester("rosa")
            #expect(skipped.status == 0, "\(skipped.output)")
            #expect(try await rosa.kit.pendingRequests().isEmpty)
            chmod(host.configuration.path, 0o666)
            let unsafe = try await host.pamtester("rosa")
            #expect(unsafe.status != 0 && unsafe.output.contains("not configured correctly"), "\(unsafe.output)")
        }
    }
}

enum PAMCommandTestSupport {
    static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}

/// sshd with keyboard-interactive logins through the module, paramiko as the client.
@Suite("PAM module in sshd", .serialized)
struct PAMSSHTests {
    @Test("an SSH login waits for the phone, whose number is in the prompt itself; approved, the session runs; denied, it does not")
    func sshLogin() async throws {
        guard PAMHarness.available else { return }
        if let skipped = TestSSHD.skipped {
            FileHandle.standardError.write(Data("PAM sshd tests: SKIPPED: \(skipped)\n".utf8))
            return
        }
        try await TestServer.with(.sqlite) { server in
            PAMHarness.catchUp(server.clock)
            try await server.setPolicy(["default_acr": "urn:countersign:acr:number-match"])
            let host = try await EnrolledHost.enroll(server)
            defer { host.remove() }
            let sshd = try await onThreadOfItsOwn { try TestSSHD(host: host) }
            defer { sshd.stop() }
            let device = try await server.enrollFactorDevice(for: try await server.createUser(sshd.user))

            async let approved = sshd.login()
            let (_, details, _) = try await device.waitForNewest()
            #expect(details.client.name == "build-host-7")
            let detail = try #require(details.authorizationDetails?.first)
            #expect(detail["type"]?.stringValue == "ssh_login" && detail["remote_address"]?.stringValue == "127.0.0.1")
            #expect(detail["service"]?.stringValue?.hasPrefix("cs-sshd-") == true)
            let match = try #require(try await server.database.first(
                "SELECT match_number FROM approval_transactions WHERE id = \(details.requestID)", column: "match_number",
                as: Int64.self))
            let answered = try await device.answer(factors: ["number_match"], number: match)
            #expect(answered["status"] as? String == "approved", "\(answered.errorDescription ?? "")")
            let login = try await approved
            #expect(login.ok && login.output == "logged-in\n", "\(login)")
            #expect(login.prompts.contains("Approve on your phone and choose \(match), then press Enter: "), "\(login.prompts)")

            async let refused = sshd.login()
            _ = try await device.waitForNewest()
            _ = try await device.answer(.deny, factors: [], reason: .declined)
            let denied = try await refused
            #expect(!denied.ok && denied.output == nil, "\(denied)")
        }
    }
}

/// The module's own behaviour when its helper misbehaves, with small shell scripts in the
/// helper's place: the module is what is tested, and it must refuse the login, never hang past
/// its timeout, and leave no process behind.
@Suite("PAM module with a helper that misbehaves", .serialized)
struct PAMHelperFailureTests {
    static func withHelper(_ script: String, _ body: (String) async throws -> Void) async throws {
        guard PAMHarness.available else { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pam-helper-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let helper = directory.appendingPathComponent("helper")
        try "#!/bin/sh\n\(script)\n".write(to: helper, atomically: true, encoding: .utf8)
        chmod(helper.path, 0o755)
        let service = "countersign-test-\(UUID().uuidString.prefix(8).lowercased())"
        let module = try await PAMHarness.compiledModule()
        try "auth required \(module.path) helper=\(helper.path) timeout=10\n"
            .write(toFile: "/etc/pam.d/\(service)", atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: "/etc/pam.d/\(service)") }
        try await body(service)
    }

    static func pamtester(_ service: String) async throws -> ChildProcess.Finished {
        try await ChildProcess.spawned(try #require(ChildProcess.find("pamtester")), [service, "olga", "authenticate"], input: "\n")
    }

    @Test("a helper that says nothing and never ends: refused at the timeout, and killed")
    func hangs() async throws {
        try await Self.withHelper("exec sleep 1000") { service in
            // The shell times pamtester itself: this process may learn of a child's end late
            // while the suite runs other children (Foundation's child monitor).
            let timed = try await ChildProcess.spawned(
                URL(fileURLWithPath: "/bin/sh"),
                ["-c", "start=$(date +%s); echo | pamtester \(service) olga authenticate >/dev/null 2>&1; "
                    + "status=$?; echo \"$status $(( $(date +%s) - start ))\""])
            let fields = timed.output.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
            #expect(fields.count == 2 && fields[0] != 0, "\(timed.output)")
            #expect((fields.last ?? .max) < 20, "pamtester took \(timed.output) seconds")
            let left = try await ChildProcess.result(try #require(ChildProcess.find("pgrep")), ["-f", "sleep 1000"])
            #expect(left.output.isEmpty, "a helper outlived the module: \(left.output)")
        }
    }

    @Test("a helper that sends what is not a line of the protocol, or ends without a verdict: refused",
          arguments: ["echo 'RESULT SUCCESS please'", "printf 'INFO \\033[2J\\nRESULT SUCCESS\\n'", "exit 0",
                      "head -c 5000 /dev/zero | tr '\\\\0' a"])
    func garbage(script: String) async throws {
        try await Self.withHelper(script) { service in
            let finished = try await Self.pamtester(service)
            #expect(finished.status != 0, "\(finished.output)")
        }
    }

    @Test("its verdict is the module's: RESULT SUCCESS after a prompt answered lets the user in")
    func verdict() async throws {
        try await Self.withHelper("echo 'PROMPT Press Enter: '; read line; echo 'RESULT SUCCESS'") { service in
            let finished = try await Self.pamtester(service)
            #expect(finished.status == 0, "\(finished.output)")
        }
    }
}
