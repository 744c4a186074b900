import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// RADIUS over TLS (RFC 6614) with radsecproxy, an independent implementation, in front: radclient
/// sends UDP to radsecproxy, which speaks TLS with its client certificate to Countersign's RadSec
/// port. Runs whenever radclient, radsecproxy and openssl are installed (CI installs them).
@Suite("RadSec through radsecproxy")
struct RadSecTests {
    static let available: Bool = RADClient.executable != nil && RadSecProxy.executable != nil
        && ChildProcess.find("openssl") != nil

    static func withRadSec(
        _ body: (TestServer, RadSecPKI, Int) async throws -> Void
    ) async throws {
        guard available else { return }
        let pki = try await onThreadOfItsOwn { try RadSecPKI.make() }
        defer { try? FileManager.default.removeItem(at: pki.directory) }
        try await TestServer.with(.sqlite, configure: { $0.radsec = pki.configuration() }) { server in
            try await body(server, pki, try #require(await server.server.radsecPort()))
        }
    }

    @Test("a login through radsecproxy: pushed, approved on the phone, Access-Accept back over TLS and UDP")
    func loginOverTLS() async throws {
        try await Self.withRadSec { server, pki, port in
            _ = try await server.createRADIUSClient()
            let alice = try await server.enrolledUser("alice")
            let proxy = try RadSecProxy(
                radsecPort: port, secret: "proxy-udp-secret-1", certificate: pki.path("client.pem"),
                key: pki.path("client.key"), serverCA: pki.path("ca.pem"), in: pki.directory)
            defer { proxy.stop() }
            let radius = RADClient(port: proxy.udpPort, secret: "proxy-udp-secret-1")
            async let answer = radius.send(RADClient.login("alice", password: "push"), retries: 3, timeout: 15)
            let details = try await RADIUSServerTests.pending(alice.kit)
            #expect(details.clientName == "Office VPN")
            _ = try await alice.kit.approve(details)
            let reply = try await answer
            #expect(reply?.code == "Access-Accept", "radsecproxy: \(proxy.logText)")
        }
    }

    @Test("one connection answers more than 256 packets in its life: 301 logins through radsecproxy's one connection are all answered")
    func manyPacketsOnOneConnection() async throws {
        try await Self.withRadSec { server, pki, port in
            _ = try await server.createRADIUSClient()
            let proxy = try RadSecProxy(
                radsecPort: port, secret: "proxy-udp-secret-1", certificate: pki.path("client.pem"),
                key: pki.path("client.key"), serverCA: pki.path("ca.pem"), in: pki.directory)
            defer { proxy.stop() }
            // radsecproxy opens its TLS connection on the first packet; in a loaded suite that
            // has taken longer than the burst's timeout (CI here lost the first ten), so one
            // login goes first, with time to spare, on the connection the burst then uses.
            let first = try await RADClient(port: proxy.udpPort, secret: "proxy-udp-secret-1").send(
                RADClient.login("nobody-first", password: "push"), retries: 3, timeout: 15)
            #expect(first?.code == "Access-Reject", "radsecproxy: \(proxy.logText.suffix(600))")
            // Unknown users: each request is answered at once, Access-Reject.
            let packets = (0..<300).map { RADClient.login("nobody-\($0)", password: "push").joined(separator: "\n") }
            let finished = try await ChildProcess.spawned(
                try #require(RADClient.executable),
                ["-s", "-t", "15", "-r", "1", "-p", "10", "127.0.0.1:\(proxy.udpPort)", "auth", "proxy-udp-secret-1"],
                input: packets.joined(separator: "\n\n") + "\n")
            let rejected = finished.output.split(separator: "\n").first { $0.contains("Rejected") }
            #expect(rejected?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) == "300",
                    "radclient: \(finished.output.suffix(300)) radsecproxy: \(proxy.logText.suffix(600))")
        }
    }

    @Test("a client whose certificate another CA issued gets no TLS connection, and no answer")
    func untrustedClient() async throws {
        try await Self.withRadSec { server, pki, port in
            _ = try await server.createRADIUSClient()
            _ = try await server.createUser("bob")
            let proxy = try RadSecProxy(
                radsecPort: port, secret: "proxy-udp-secret-1", certificate: pki.path("stranger.pem"),
                key: pki.path("stranger.key"), serverCA: pki.path("ca.pem"), in: pki.directory)
            defer { proxy.stop() }
            let radius = RADClient(port: proxy.udpPort, secret: "proxy-udp-secret-1")
            #expect(try await radius.send(RADClient.login("bob", password: "push"), retries: 1, timeout: 3) == nil)
        }
    }
}
