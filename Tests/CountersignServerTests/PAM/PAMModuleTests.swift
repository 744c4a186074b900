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
            let details = try await RADIUSServerTests.pending(olga.kit)
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
