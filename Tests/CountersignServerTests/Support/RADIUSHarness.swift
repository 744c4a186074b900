import Foundation
import Testing
@testable import CountersignServer

/// FreeRADIUS's `radclient`, an independent RADIUS client, sending to a server's RADIUS port.
/// The RADIUS tests run whenever it is installed (CI installs `freeradius-utils`) and say so when
/// not.
struct RADClient: Sendable {
    static let executable: URL? = {
        guard let found = ChildProcess.find("radclient") else {
            FileHandle.standardError.write(Data("RADIUS end-to-end tests: SKIPPED: radclient (freeradius-utils) is not installed\n".utf8))
            return nil
        }
        return found
    }()

    let port: Int
    let secret: String

    /// Sends one packet (`auth` or `status`) with `attributes` (radclient's `Name = value`
    /// lines), retransmitting it unchanged `retries` times `timeout` seconds apart while no answer
    /// comes; nil when none came.
    func send(_ attributes: [String], command: String = "auth", retries: Int = 1, timeout: Int = 40,
              secret: String? = nil) async throws -> RADReply? {
        let executable = try #require(Self.executable)
        let finished = try await ChildProcess.spawned(
            executable, ["-x", "-r", String(retries), "-t", String(timeout), "127.0.0.1:\(port)", command, secret ?? self.secret],
            environment: nil, input: attributes.joined(separator: "\n") + "\n")
        return RADReply(parsing: finished.output)
    }

    /// An Access-Request as a VPN gateway sends one, with a Message-Authenticator.
    static func login(_ user: String, password: String, station: String = "203.0.113.7", extra: [String] = [],
                      messageAuthenticator: Bool = true) -> [String] {
        ["User-Name = \"\(user)\"", "User-Password = \"\(password)\"", "NAS-Identifier = \"vpn-gw-1\"",
         "NAS-IP-Address = 192.0.2.10", "Calling-Station-Id = \"\(station)\"", "Service-Type = Framed-User"]
            + extra + (messageAuthenticator ? ["Message-Authenticator = 0x00"] : [])
    }
}

/// What radclient printed of the answer it received.
struct RADReply: Sendable {
    /// `Access-Accept`, `Access-Reject`, `Access-Challenge`.
    let code: String
    /// The answer's attributes as radclient names them, in order, values without quotes.
    let attributes: [(name: String, value: String)]

    init?(parsing output: String) {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.lastIndex(where: { $0.hasPrefix("Received ") }) else { return nil }
        code = String(lines[start].dropFirst("Received ".count).prefix { $0 != " " })
        var attributes: [(String, String)] = []
        for line in lines[(start + 1)...] {
            guard line.hasPrefix("\t"), let equals = line.range(of: " = ") else { break }
            var value = String(line[equals.upperBound...])
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            attributes.append((line.dropFirst().prefix { $0 != " " }.description, value))
        }
        self.attributes = attributes
    }

    func first(_ name: String) -> String? { attributes.first { $0.name == name }?.value }
    func all(_ name: String) -> [String] { attributes.filter { $0.name == name }.map(\.value) }
    var replyMessage: String? { all("Reply-Message").isEmpty ? nil : all("Reply-Message").joined() }
}

extension TestServer {
    /// The RADIUS port of a server started with `radiusPort = 0`.
    func radiusPort() async throws -> Int {
        try #require(await server.radiusPort())
    }

    /// A RADIUS client of the tenant for `networks`, with a secret the test knows; its id.
    func createRADIUSClient(
        name: String = "Office VPN", networks: [String] = ["127.0.0.1/32"], mode: String = "push",
        secret: String = "radius-shared-secret-1", extra: [String: any Sendable] = [:], tenant: String = "default"
    ) async throws -> String {
        var body: [String: any Sendable] = ["name": name, "networks": networks, "mode": mode, "secret": secret]
        body.merge(extra) { $1 }
        let answer = try await admin("POST", "/admin/v1/tenants/\(tenant)/radius-clients", json: body)
        #expect(answer.status == 201, "RADIUS client: \(answer.errorDescription ?? "")")
        let client = try #require(answer["radius_client"] as? [String: any Sendable])
        return try #require(client["id"] as? String)
    }

    /// The approval requests stored for a user.
    func approvalCount(userID: String) async throws -> Int {
        try await database.first(
            "SELECT COUNT(*) AS n FROM approval_transactions WHERE user_id = \(userID)", column: "n", as: Int.self) ?? 0
    }
}

/// radsecproxy, an independent RadSec implementation, in front of the server's RadSec port: it
/// takes radclient's UDP requests and speaks RADIUS over TLS to Countersign with a client
/// certificate, as a site's proxy does. Made and started per test; stopped by `stop()`.
final class RadSecProxy: @unchecked Sendable {
    static let executable: URL? = {
        guard let found = ChildProcess.find("radsecproxy") ?? ["/usr/sbin/radsecproxy"].map(URL.init(fileURLWithPath:))
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            FileHandle.standardError.write(Data("RadSec end-to-end tests: SKIPPED: radsecproxy is not installed\n".utf8))
            return nil
        }
        return found
    }()

    let udpPort: Int
    private let process: SpawnedPeer
    let log: URL

    /// Starts radsecproxy listening for `secret` on a free UDP port and forwarding to `radsecPort`
    /// with `certificate` and `key`, trusting `serverCA` for the server's certificate.
    init(radsecPort: Int, secret: String, certificate: String, key: String, serverCA: String, in directory: URL) throws {
        udpPort = try freeUDPPort()
        log = directory.appendingPathComponent("radsecproxy-\(UUID().uuidString).log")
        let configuration = directory.appendingPathComponent("radsecproxy-\(UUID().uuidString).conf")
        try """
        ListenUDP 127.0.0.1:\(udpPort)
        LogLevel 5
        LogDestination file://\(log.path)
        tls countersign {
            CACertificateFile \(serverCA)
            CertificateFile \(certificate)
            CertificateKeyFile \(key)
        }
        client radclient {
            host 127.0.0.1
            type udp
            secret \(secret)
        }
        server countersign {
            host 127.0.0.1
            port \(radsecPort)
            type tls
            tls countersign
            CertificateNameCheck off
            secret radsec
        }
        realm * {
            server countersign
        }
        """.write(to: configuration, atomically: true, encoding: .utf8)
        process = try SpawnedPeer(try #require(Self.executable).path, ["-f", "-c", configuration.path])
    }

    /// radsecproxy does not stop on SIGTERM while a connection is open: it is killed.
    func stop() {
        process.stop()
    }

    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
}

/// A UDP port that was free a moment ago.
func freeUDPPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Two certificate authorities made with openssl: one that signs Countersign's RadSec server
/// certificate and the clients it trusts, and another whose client is not trusted.
struct RadSecPKI: Sendable {
    let directory: URL
    var path: (String) -> String { { directory.appendingPathComponent($0).path } }

    static func make() throws -> RadSecPKI {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("radsec-pki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let pki = RadSecPKI(directory: directory)
        let openssl = try #require(ChildProcess.find("openssl"))
        func run(_ arguments: [String]) throws {
            let finished = try ChildProcess.resultBlocking(openssl, arguments)
            guard finished.status == 0 else { throw ChildProcess.Failure(status: finished.status, standardError: finished.output) }
        }
        for ca in ["ca", "other-ca"] {
            try run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                     "-subj", "/CN=RadSec test \(ca)", "-keyout", pki.path("\(ca).key"), "-out", pki.path("\(ca).pem"),
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        }
        for (leaf, ca, usage) in [("server", "ca", "serverAuth"), ("client", "ca", "clientAuth"),
                                  ("stranger", "other-ca", "clientAuth")] {
            try run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=\(leaf)",
                     "-keyout", pki.path("\(leaf).key"), "-out", pki.path("\(leaf).csr")])
            try "extendedKeyUsage=\(usage)\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"
                .write(toFile: pki.path("\(leaf).ext"), atomically: true, encoding: .utf8)
            try run(["x509", "-req", "-in", pki.path("\(leaf).csr"), "-CA", pki.path("\(ca).pem"), "-CAkey", pki.path("\(ca).key"),
                     "-CAcreateserial", "-days", "2", "-extfile", pki.path("\(leaf).ext"), "-out", pki.path("\(leaf).pem")])
        }
        return pki
    }

    /// The server's RadSec configuration on `port`, trusting this PKI's `ca` for clients.
    func configuration(port: Int = 0) -> RadSecConfiguration {
        RadSecConfiguration(
            port: port, certificateChainFile: path("server.pem"), privateKeyFile: path("server.key"),
            clientCAFile: path("ca.pem"))
    }
}

/// Sends one raw datagram to 127.0.0.1:`port` and waits up to `wait` for an answer: for packets
/// no RADIUS client would send (truncated, oversized). The wait blocks a thread of its own, never
/// one of the concurrency pool's: the server under test answers on that pool, in this process,
/// and two tests blocked in `recv` on its two threads starved it until their timeouts.
func sendDatagram(_ bytes: [UInt8], to port: Int, wait: Duration = .seconds(1)) async throws -> [UInt8]? {
    try await onThreadOfItsOwn { try sendDatagramBlocking(bytes, to: port, wait: wait) }
}

private func sendDatagramBlocking(_ bytes: [UInt8], to port: Int, wait: Duration) throws -> [UInt8]? {
    let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: Int(wait.components.seconds), tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let sent = bytes.withUnsafeBytes { buffer in
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
    guard sent == bytes.count else { throw POSIXError(.EMSGSIZE) }
    var answer = [UInt8](repeating: 0, count: 4096)
    let received = recv(descriptor, &answer, answer.count, 0)
    return received > 0 ? Array(answer.prefix(received)) : nil
}
