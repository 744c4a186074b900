import Foundation
import Testing
@testable import CountersignServer

/// The PAM module as a host uses it: compiled by Scripts/build-pam, the host enrolled with
/// `countersign pam enroll-host`, a PAM service file naming the module, and a real PAM
/// application (pamtester, or OpenSSH's sshd) calling it. The service file has to be in
/// /etc/pam.d, which only root may write: the tests run when the process is root and pamtester,
/// a C compiler and Linux-PAM's headers are installed (CI has all of them), and say so when not.
enum PAMHarness {
    static let skipped: String? = {
        if geteuid() != 0 { return "the tests are not running as root (the PAM service file goes in /etc/pam.d)" }
        if ChildProcess.find("pamtester") == nil { return "pamtester is not installed" }
        if !FileManager.default.fileExists(atPath: "/usr/include/security/pam_modules.h") {
            return "Linux-PAM's headers (libpam0g-dev) are not installed"
        }
        if BuildProducts.directory == nil { return "the countersign executable was not built" }
        return nil
    }()

    static var available: Bool {
        if let skipped {
            FileHandle.standardError.write(Data("PAM tests: SKIPPED: \(skipped)\n".utf8))
            return false
        }
        return true
    }

    /// pam_countersign.so, compiled once per test run.
    static let module: Result<URL, any Error> = Result {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("pam-\(UUID().uuidString)/pam_countersign.so")
        _ = try ChildProcess.runBlocking(
            BuildProducts.packageRoot.appendingPathComponent("Scripts/build-pam"), [output.path])
        return output
    }

    /// `module`, compiled (the first time) on a thread of its own, not one of the concurrency pool's.
    static func compiledModule() async throws -> URL {
        try await onThreadOfItsOwn { try module.get() }
    }

    static var countersign: URL { BuildProducts.directory!.appendingPathComponent("countersign") }

    /// Moves the test clock to the real time: the PAM helper is another process, which dates its
    /// client assertions by the real clock, and a test clock made when the test began, then kept
    /// while it waited for a server slot, would find them minutes in the future (invalid_client
    /// under a full suite). The server and the in-process devices both read the test clock.
    static func catchUp(_ clock: TestClock) {
        clock.advance(by: max(0, Date().timeIntervalSince(clock.now)))
    }
}

/// One host enrolled with a server: its configuration and key in a scratch directory, and a PAM
/// service file in /etc/pam.d that is removed again by `remove()`.
struct EnrolledHost {
    let directory: URL
    let configuration: URL
    let service: String

    /// Enrolls the host with `countersign pam enroll-host` against `server`, with `extra` options,
    /// and writes the service file `countersign-test-…` with the module's `arguments`.
    static func enroll(_ server: TestServer, extra: [String] = [], arguments: [String] = []) async throws -> EnrolledHost {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pam-host-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = directory.appendingPathComponent("pam.conf")
        let enrolled = try await ChildProcess.spawned(
            PAMHarness.countersign,
            ["pam", "enroll-host", "--server", server.base, "--name", "build-host-7", "--config", configuration.path,
             "--key-file", directory.appendingPathComponent("pam.key").path] + extra,
            environment: ["COUNTERSIGN_ADMIN_KEY": server.adminKey, "PATH": "/usr/bin:/bin"])
        #expect(enrolled.status == 0, "enroll-host: \(enrolled.output)")
        let module = try await PAMHarness.compiledModule()
        let service = "countersign-test-\(UUID().uuidString.prefix(8).lowercased())"
        try """
        auth required \(module.path) config=\(configuration.path) helper=\(PAMHarness.countersign.path) timeout=60 \(arguments.joined(separator: " "))
        account required pam_permit.so
        session required pam_permit.so

        """.write(toFile: "/etc/pam.d/\(service)", atomically: true, encoding: .utf8)
        return EnrolledHost(directory: directory, configuration: configuration, service: service)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: "/etc/pam.d/\(service)")
        try? FileManager.default.removeItem(at: directory)
    }

    /// Replaces `name`'s value in the configuration.
    func set(_ name: String, _ value: String) throws {
        let text = try String(contentsOf: configuration, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("\(name) =") ? "\(name) = \(value)" : String(line)
        }
        try lines.joined(separator: "\n").write(to: configuration, atomically: true, encoding: .utf8)
        chmod(configuration.path, 0o600)
    }

    /// pamtester authenticating `user` through the service, Enter typed at the prompt.
    func pamtester(_ user: String) async throws -> ChildProcess.Finished {
        try await ChildProcess.spawned(
            try #require(ChildProcess.find("pamtester")), ["-v", service, user, "authenticate"], input: "\n")
    }
}

/// OpenSSH's sshd on a loopback port with a configuration of its own: keyboard-interactive
/// logins through PAM only, under a PAM service named after the link it is started through
/// (sshd's PAM service is its program name), and a throw-away local user.
final class TestSSHD: @unchecked Sendable {
    let port: Int
    let user: String
    private let process: SpawnedPeer
    private let directory: URL
    private let service: String

    static var skipped: String? {
        if ChildProcess.find("python3").map({ (try? ChildProcess.runBlocking($0, ["-c", "import paramiko"])) != nil }) != true {
            return "python3 with paramiko is not installed"
        }
        if !FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd") { return "sshd (openssh-server) is not installed" }
        return nil
    }

    /// Starts sshd whose PAM stack runs the module with `moduleLine`'s arguments.
    init(host: EnrolledHost) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sshd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        user = "cs-\(UUID().uuidString.prefix(8).lowercased())"
        let useradd = try ChildProcess.resultBlocking(
            try #require(ChildProcess.find("useradd") ?? URL(fileURLWithPath: "/usr/sbin/useradd")),
            ["-M", "-d", "/nonexistent", "-s", "/bin/sh", user])
        guard useradd.status == 0 else { throw ChildProcess.Failure(status: useradd.status, standardError: useradd.output) }
        // sshd's PAM service is the name it is started by.
        service = "cs-sshd-\(UUID().uuidString.prefix(8).lowercased())"
        let link = directory.appendingPathComponent(service)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/usr/sbin/sshd")
        let stack = try String(contentsOfFile: "/etc/pam.d/\(host.service)", encoding: .utf8)
        try stack.write(toFile: "/etc/pam.d/\(service)", atomically: true, encoding: .utf8)
        let key = directory.appendingPathComponent("host_key")
        _ = try ChildProcess.runBlocking(try #require(ChildProcess.find("ssh-keygen")), ["-q", "-t", "ed25519", "-N", "", "-f", key.path])
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        port = try PortHolder().port
        let configuration = directory.appendingPathComponent("sshd_config")
        try """
        Port \(port)
        ListenAddress 127.0.0.1
        HostKey \(key.path)
        PidFile \(directory.appendingPathComponent("sshd.pid").path)
        UsePAM yes
        KbdInteractiveAuthentication yes
        PasswordAuthentication no
        PubkeyAuthentication no
        AuthenticationMethods keyboard-interactive
        PermitRootLogin no
        StrictModes no
        LogLevel VERBOSE

        """.write(to: configuration, atomically: true, encoding: .utf8)
        process = try SpawnedPeer(link.path, ["-D", "-e", "-f", configuration.path])
        // Until it listens (for up to a minute).
        for _ in 0..<600 {
            if Self.accepts(port: port) { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted.
    static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    struct Login: Sendable {
        let ok: Bool
        let prompts: [String]
        let output: String?
    }

    /// A keyboard-interactive login from paramiko that answers every prompt with Enter and runs `command`.
    func login(command: String = "echo logged-in") async throws -> Login {
        let script = BuildProducts.packageRoot.appendingPathComponent("Tests/Peers/ssh_keyboard_interactive.py")
        let finished = try await ChildProcess.spawned(
            try #require(ChildProcess.find("python3")), [script.path, "127.0.0.1", String(port), user, command])
        let line = try #require(finished.output.split(separator: "\n").last { $0.hasPrefix("{") }, "\(finished.output)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        return Login(ok: json["ok"] as? Bool == true, prompts: json["prompts"] as? [String] ?? [],
                     output: json["output"] as? String)
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: "/etc/pam.d/\(service)")
        if let userdel = ChildProcess.find("userdel") ?? Optional(URL(fileURLWithPath: "/usr/sbin/userdel")) {
            _ = try? ChildProcess.resultBlocking(userdel, [user])
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
