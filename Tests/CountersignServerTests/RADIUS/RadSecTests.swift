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
        let pki = try RadSecPKI.make()
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

    @Test("400 requests through radsecproxy are all answered")
    func manyRequestsOnOneConnection() async throws {
        try await Self.withRadSec { server, pki, port in
            _ = try await server.createRADIUSClient()
            let proxy = try RadSecProxy(
                radsecPort: port, secret: "proxy-udp-secret-1", certificate: pki.path("client.pem"),
                key: pki.path("client.key"), serverCA: pki.path("ca.pem"), in: pki.directory)
            defer { proxy.stop() }
            // Two runs of 200 (radclient repeats one packet, so past 256 its identifiers would
            // repeat the packet exactly, which radsecproxy answers as a duplicate itself).
            for _ in 0..<2 {
                let finished = try await ChildProcess.spawned(
                    try #require(RADClient.executable),
                    ["-q", "-s", "-c", "200", "-p", "20", "-r", "3", "-t", "5", "127.0.0.1:\(proxy.udpPort)", "auth",
                     "proxy-udp-secret-1"],
                    input: RADClient.login("nobody", password: "push").joined(separator: "\n") + "\n")
                // radclient's summary: "Rejected      : 200".
                let line = finished.output.split(separator: "\n").first { $0.contains("Rejected") }
                let received = line.flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
                #expect(received == 200, "\(finished.output.suffix(2000))")
            }
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
