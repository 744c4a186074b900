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
        let finished = try await ChildProcess.result(
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
