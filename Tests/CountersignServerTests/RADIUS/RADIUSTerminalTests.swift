import Foundation
import Testing

/// A RADIUS login approved by the terminal authenticator, everything through the real
/// `countersign` executable: `countersign serve --radius-port`, `admin radius-client create`,
/// `device enroll`, `device pending` and `device approve`, with radclient as the gateway.
@Suite("RADIUS login approved in the terminal")
struct RADIUSTerminalTests {
    @Test("radclient's login is pending in the terminal, shown with its network_access details, and approved there")
    func approvedInTheTerminal() async throws {
        guard CommandLineDeviceTests.enabled, RADClient.executable != nil else { return }
        var scene = try await CommandLineDeviceTests.Scene.make(serveArguments: ["--radius-port", "0"])
        defer { scene.end() }
        let secret = "terminal-radius-secret"
        let created = try await scene.run(
            ["admin", "radius-client", "create", "--name", "Office VPN", "--network", "127.0.0.1/32", "--secret-stdin"],
            input: secret + "\n")
        #expect(created.status == 0, "\(created.output)")
        _ = try await scene.enroll(["--name", "terminal"])
        let log = try String(contentsOf: scene.scratch.appendingPathComponent("server.err"), encoding: .utf8)
        let port = try #require(log.range(of: "RADIUS listening on UDP 127.0.0.1:").flatMap {
            Int(log[$0.upperBound...].prefix { $0.isNumber })
        }, "\(log)")
        let radius = RADClient(port: port, secret: secret)
        async let answer = radius.send(RADClient.login("alice", password: "push"))
        var requestID: String?
        for _ in 0..<100 where requestID == nil {
            let pending = try await scene.run(["device", "pending"]).output
            requestID = pending.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("txn_") }.map(String.init)
            if requestID == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let approved = try await scene.run(["device", "approve", try #require(requestID)])
        #expect(approved.status == 0, "\(approved.output)")
        #expect(approved.output.contains("Office VPN"), "\(approved.output)")
        #expect(approved.output.contains("network_access"), "\(approved.output)")
        #expect(try await answer?.code == "Access-Accept")
    }
}
