import Foundation
import Synchronization
import Testing

/// An SMTP server for the mail tests: aiosmtpd (Tests/Peers/smtp_peer.py) with implicit TLS,
/// STARTTLS or neither, a login when asked, and a certificate for 127.0.0.1 from a CA of the
/// harness's own. What it receives it reads with Python's e-mail package and keeps as
/// `ReceivedMail`. Runs whenever python3 has aiosmtpd (CI installs it); says so when not.
final class SMTPHarness: Sendable {
    static let script = BuildProducts.packageRoot.appendingPathComponent("Tests/Peers/smtp_peer.py")

    static let available: Bool = {
        guard let python = ChildProcess.find("python3"),
              (try? ChildProcess.runBlocking(python, ["-c", "import aiosmtpd; print('ok')"]))?.contains("ok") == true else {
            FileHandle.standardError.write(Data("Mail tests: SKIPPED: python3 with aiosmtpd is not available (pip install aiosmtpd)\n".utf8))
            return false
        }
        return true
    }()

    enum Mode: String, Sendable { case tls, starttls, plain }

    struct ReceivedMail: Decodable, Sendable {
        let mailFrom: String
        let rcptTos: [String]
        let tls: Bool
        let login: String?
        let fromName: String
        let fromAddress: String
        let to: String
        let subject: String
        let messageID: String
        let date: String
        let autoSubmitted: String?
        let contentType: String
        let charset: String?
        let text: String?
        let defects: [String]
        let longestLine: Int

        enum CodingKeys: String, CodingKey {
            case mailFrom = "mail_from"
            case rcptTos = "rcpt_tos"
            case tls, login, to, subject
            case fromName = "from_name"
            case fromAddress = "from_address"
            case messageID = "message_id"
            case date
            case autoSubmitted = "auto_submitted"
            case contentType = "content_type"
            case charset, text, defects
            case longestLine = "longest_line"
        }
    }

    static let user = "mailer"
    static let password = "correct horse battery staple"

    let directory: URL
    let port: Int
    let mode: Mode
    let login: Bool
    private let process = Mutex<SpawnedPeer?>(nil)
    /// While the server is down, its port, bound and not listening: connections are refused at
    /// once, and no other test's server can take the port (whose greeting the client would wait
    /// for until its timeout). Released when the server starts.
    private let closedPort = Mutex<PortHolder?>(nil)

    var caPEM: String { (try? String(contentsOf: directory.appendingPathComponent("ca.pem"), encoding: .utf8)) ?? "" }
    var otherCAPEM: String { (try? String(contentsOf: directory.appendingPathComponent("other-ca.pem"), encoding: .utf8)) ?? "" }
    private var inbox: URL { directory.appendingPathComponent("inbox") }

    private init(directory: URL, port: Int, mode: Mode, login: Bool) {
        self.directory = directory
        self.port = port
        self.mode = mode
        self.login = login
    }

    /// A server on a free port of 127.0.0.1, or none on a port kept free when `running` is
    /// false (`start()` later: mail queued while it was down must then arrive).
    /// A peer that does not start (another process took the port between its choice and the
    /// peer's bind) is tried again on another port, three times in all.
    static func make(_ mode: Mode, login: Bool = true, running: Bool = true) async throws -> SMTPHarness {
        var lastError: (any Error)?
        for _ in 0..<3 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-\(UUID().uuidString)")
            let closed = running ? nil : try PortHolder(listening: false)
            let harness = SMTPHarness(directory: directory, port: try closed?.port ?? freeTCPPort(), mode: mode, login: login)
            harness.closedPort.withLock { $0 = closed }
            do {
                try FileManager.default.createDirectory(at: harness.inbox, withIntermediateDirectories: true)
                try await harness.makePKI()
                if running { try await harness.start() }
                return harness
            } catch {
                lastError = error
                harness.shutdown()
            }
        }
        throw lastError ?? SMTPHarnessFailure(message: "the SMTP peer did not start")
    }

    func start() async throws {
        let python = try #require(ChildProcess.find("python3"))
        let ready = inbox.appendingPathComponent("ready")
        try? FileManager.default.removeItem(at: ready)
        closedPort.withLock { $0 = nil }
        var arguments = [Self.script.path, "--port", "\(port)", "--mode", mode.rawValue, "--out", inbox.path,
                         "--cert", path("server.pem"), "--key", path("server.key"), "--log", path("peer.log")]
        if login { arguments += ["--user", Self.user, "--password", Self.password] }
        let peer = try SpawnedPeer(python.path, arguments)
        process.withLock { $0 = peer }
        // Python and asyncio start in well under a second alone, but a loaded suite has taken
        // more than ten.
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if FileManager.default.fileExists(atPath: ready.path) { return }
            if peer.hasEnded() { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        stop()
        let log = (try? String(contentsOfFile: path("peer.log"), encoding: .utf8)) ?? ""
        throw SMTPHarnessFailure(message: "the SMTP peer did not start on port \(port): \(log.suffix(2000))")
    }

    func stop() {
        process.withLock { peer in
            peer?.stop()
            peer = nil
        }
    }

    func shutdown() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The messages received so far, in order of arrival.
    func received() throws -> [ReceivedMail] {
        try FileManager.default.contentsOfDirectory(atPath: inbox.path)
            .filter { $0.hasPrefix("message-") && $0.hasSuffix(".json") }.sorted()
            .map { try JSONDecoder().decode(ReceivedMail.self, from: Data(contentsOf: inbox.appendingPathComponent($0))) }
    }

    /// Waits up to `timeout` for `count` messages.
    func waitFor(_ count: Int, timeout: Duration = .seconds(20)) async throws -> [ReceivedMail] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let messages = try received()
            if messages.count >= count { return messages }
            try await Task.sleep(for: .milliseconds(50))
        }
        let messages = try received()
        #expect(messages.count >= count, "the SMTP peer received \(messages.count) of \(count) messages")
        return messages
    }

    /// A CA, a server certificate it signs for 127.0.0.1 and localhost, and a CA that signs
    /// nothing, with openssl.
    private func makePKI() async throws {
        let openssl = try #require(ChildProcess.find("openssl"))
        func run(_ arguments: [String]) async throws {
            let finished = try await ChildProcess.spawned(openssl, arguments)
            guard finished.status == 0 else { throw SMTPHarnessFailure(message: "openssl: \(finished.output)") }
        }
        for ca in ["ca", "other-ca"] {
            try await run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                           "-subj", "/CN=Mail test \(ca)", "-keyout", path("\(ca).key"), "-out", path("\(ca).pem"),
                           "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        }
        try await run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=mail.test",
                       "-keyout", path("server.key"), "-out", path("server.csr")])
        try "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"
            .write(to: URL(fileURLWithPath: path("server.ext")), atomically: true, encoding: .utf8)
        try await run(["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                       "-CAcreateserial", "-days", "2", "-extfile", path("server.ext"), "-out", path("server.pem")])
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
}

struct SMTPHarnessFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
