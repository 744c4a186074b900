import CountersignCore
import CountersignKit
import CountersignRADIUS
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// The RADIUS server end to end: `countersign serve` with a RADIUS port, FreeRADIUS's radclient
/// as the gateway, and the user's phone (CountersignKit, or a device answering with factors)
/// deciding. Both engines; runs whenever radclient is installed (CI installs it).
@Suite("RADIUS server with radclient")
struct RADIUSServerTests {
    static let secret = "radius-shared-secret-1"

    /// A server answering RADIUS on a free port, and radclient pointed at it.
    static func withRADIUS(_ engine: Engine, _ body: (TestServer, RADClient) async throws -> Void) async throws {
        guard RADClient.executable != nil else { return }
        try await TestServer.with(engine, configure: { $0.radiusPort = 0 }) { server in
            try await body(server, RADClient(port: try await server.radiusPort(), secret: secret))
        }
    }

    /// The newest request on the phone, once it arrives (within a minute: a loaded machine starts
    /// a PAM helper or a gateway's request slowly).
    static func pending(_ kit: CountersignAuthenticator) async throws -> RequestDetails {
        for _ in 0..<2400 {
            if let request = try await kit.pendingRequests().first { return try await kit.details(for: request) }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw RADIUSTestFailure.noRequest
    }

    enum RADIUSTestFailure: Error { case noRequest }

    @Test("push: the login waits for the phone, which is shown the gateway, NAS and address it signs for; approved, Access-Accept with Class and the client's attributes",
          arguments: Engine.available)
    func pushApproved(engine: Engine) async throws {
        try await Self.withRADIUS(engine) { server, radius in
            _ = try await server.createRADIUSClient(extra: ["reply_attributes": [["name": "Filter-Id", "value": "vpn-staff"]]])
            let alice = try await server.enrolledUser("alice")
            async let answer = radius.send(RADClient.login("alice", password: "push"))
            let details = try await Self.pending(alice.kit)
            #expect(details.clientName == "Office VPN" && details.username == "alice")
            #expect(details.ipAddress == "203.0.113.7")
            let detail = try #require(details.authorizationDetails.first)
            #expect(detail["type"]?.stringValue == "network_access")
            #expect(detail["radius_client"]?.stringValue == "Office VPN")
            #expect(detail["nas_identifier"]?.stringValue == "vpn-gw-1")
            #expect(detail["nas_ip_address"]?.stringValue == "192.0.2.10")
            #expect(detail["calling_station_id"]?.stringValue == "203.0.113.7")
            #expect(detail["service"]?.stringValue == "Framed-User")
            _ = try await alice.kit.approve(details)
            let reply = try #require(try await answer)
            #expect(reply.code == "Access-Accept")
            #expect(reply.first("Class")?.hasPrefix("0x") == true, "Class is octets: \(reply.attributes)")
            let classText = String(decoding: try Hex.bytes(String(try #require(reply.first("Class")).dropFirst(2))), as: UTF8.self)
            #expect(classText == "countersign:\(details.request.id)")
            #expect(reply.first("Filter-Id") == "vpn-staff")
            #expect(try await server.approvalCount(userID: alice.userID) == 1)
        }
    }

    @Test("push: denied on the phone, Access-Reject saying so", arguments: Engine.available)
    func pushDenied(engine: Engine) async throws {
        try await Self.withRADIUS(engine) { server, radius in
            _ = try await server.createRADIUSClient()
            let bob = try await server.enrolledUser("bob")
            async let answer = radius.send(RADClient.login("bob", password: "push"))
            _ = try await bob.kit.deny(try await Self.pending(bob.kit))
            let reply = try #require(try await answer)
            #expect(reply.code == "Access-Reject" && reply.replyMessage == "Denied on your phone.")
        }
    }

    @Test("one push per login: retransmissions of the request are not acted on twice, a retry with a new Identifier joins the login, and both are accepted with the one approval",
          arguments: Engine.available)
    func onePushPerLogin(engine: Engine) async throws {
        try await Self.withRADIUS(engine) { server, radius in
            _ = try await server.createRADIUSClient()
            let carol = try await server.enrolledUser("carol")
            // radclient sends the same packet again every second while no answer comes.
            async let first = radius.send(RADClient.login("carol", password: "push"), retries: 30, timeout: 1)
            let details = try await Self.pending(carol.kit)
            try await Task.sleep(for: .seconds(2))
            // Another request of the same login (new Identifier and authenticator).
            async let second = radius.send(RADClient.login("carol", password: "push"))
            try await waitForMetric(server, "countersign_radius_duplicates_total{outcome=\"dropped_in_progress\"}")
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await carol.kit.pendingRequests().count == 1)
            _ = try await carol.kit.approve(details)
            #expect(try await first?.code == "Access-Accept")
            #expect(try await second?.code == "Access-Accept")
            #expect(try await server.approvalCount(userID: carol.userID) == 1)
            // A new login after the approval was used starts a new approval.
            async let third = radius.send(RADClient.login("carol", password: "push"))
            let next = try await Self.pending(carol.kit)
            #expect(next.request.id != details.request.id)
            _ = try await carol.kit.deny(next)
            #expect(try await third?.code == "Access-Reject")
        }
    }

    @Test("a gateway that fails over to a second node joins the login there: one push, both nodes accept (PostgreSQL)")
    func failoverBetweenNodes() async throws {
        guard Engine.available.contains(.postgres) else { return }
        try await Self.withRADIUS(.postgres) { nodeA, radiusA in
            try await nodeA.withSecondNode { nodeB in
                let radiusB = RADClient(port: try #require(await nodeB.server.radiusPort()), secret: Self.secret)
                _ = try await nodeA.createRADIUSClient()
                let dave = try await nodeA.enrolledUser("dave")
                async let first = radiusA.send(RADClient.login("dave", password: "push"))
                let details = try await Self.pending(dave.kit)
                async let second = radiusB.send(RADClient.login("dave", password: "push"))
                try await Task.sleep(for: .seconds(1))
                #expect(try await dave.kit.pendingRequests().count == 1)
                _ = try await dave.kit.approve(details)
                #expect(try await first?.code == "Access-Accept")
                #expect(try await second?.code == "Access-Accept")
                #expect(try await nodeA.approvalCount(userID: dave.userID) == 1)
            }
        }
    }

    @Test("push-number: an Access-Challenge whose prompt names the number; the answer with its State waits for the phone, where the number is picked",
          arguments: Engine.available)
    func pushNumber(engine: Engine) async throws {
        try await Self.withRADIUS(engine) { server, radius in
            _ = try await server.createRADIUSClient(mode: "push-number")
            let device = try await server.enrollFactorDevice(for: try await server.createUser("erin"))
            let challenge = try #require(try await radius.send(RADClient.login("erin", password: "push")))
            #expect(challenge.code == "Access-Challenge")
            let prompt = try #require(challenge.replyMessage)
            let words = prompt.split(separator: " ").map { $0.trimmingCharacters(in: .punctuationCharacters) }
            let number = try #require(words.lazy.compactMap { Int64($0) }.first)
            #expect(prompt == "Approve on your phone and choose \(number), then press Enter.")
            let state = try #require(challenge.first("State"))
            let (_, details, _) = try await device.newest()
            #expect(details.verification?.numberMatch != nil && details.client.name == "Office VPN")
            let answered = try await device.answer(factors: ["number_match"], number: number)
            #expect(answered["status"] as? String == "approved", "\(answered.errorDescription ?? "")")
            let accept = try #require(try await radius.send(
                RADClient.login("erin", password: "push", extra: ["State = \(state)"])))
            #expect(accept.code == "Access-Accept")
            // The State let in one login: another request with it is refused.
            let again = try #require(try await radius.send(RADClient.login("erin", password: "push", extra: ["State = \(state)"])))
            #expect(again.code == "Access-Reject" && again.replyMessage == RADIUSAuthentication.Message.alreadyAnswered)
            let forged = try #require(try await radius.send(
                RADClient.login("erin", password: "push", extra: ["State = 0x00112233445566778899aabbccddeeff"])))
            #expect(forged.code == "Access-Reject" && forged.replyMessage == RADIUSAuthentication.Message.unknownChallenge)
            // A challenge answered after its login expired.
            let late = try #require(try await radius.send(RADClient.login("erin", password: "push", station: "198.51.100.4")))
            let lateState = try #require(late.first("State"))
            server.clock.advance(by: 600)
            let expired = try #require(try await radius.send(
                RADClient.login("erin", password: "push", station: "198.51.100.4", extra: ["State = \(lateState)"])))
            #expect(expired.code == "Access-Reject" && expired.replyMessage == RADIUSAuthentication.Message.unknownChallenge)
        }
    }

    @Test("push: where the tenant's policy asks for number matching, a push client challenges too", arguments: Engine.available)
    func policyNumberMatchingKept(engine: Engine) async throws {
        try await Self.withRADIUS(engine) { server, radius in
            try await server.setPolicy(["default_acr": "urn:countersign:acr:number-match"])
            _ = try await server.createRADIUSClient(mode: "push")
            _ = try await server.enrollFactorDevice(for: try await server.createUser("fred"))
            let reply = try #require(try await radius.send(RADClient.login("fred", password: "push")))
            #expect(reply.code == "Access-Challenge")
            #expect(reply.replyMessage?.hasPrefix("Approve on your phone and choose ") == true)
        }
    }

    @Test("passcode: a code from the device is accepted once; a used, wrong or malformed one is rejected; auto sends a push for the password push",
          arguments: Engine.available)
    func passcodes(engine: Engine) async throws {
        try await Self.withRADIUS(engine) { server, radius in
            _ = try await server.createRADIUSClient(mode: "auto")
            let device = try await server.enrollFactorDevice(for: try await server.createUser("gina"), totp: true)
            let totp = try device.totpGenerator()
            let code = totp.code(at: server.clock.now)
            let accepted = try #require(try await radius.send(RADClient.login("gina", password: code)))
            #expect(accepted.code == "Access-Accept")
            let replayed = try #require(try await radius.send(RADClient.login("gina", password: code)))
            #expect(replayed.code == "Access-Reject" && replayed.replyMessage == RADIUSAuthentication.Message.wrongCode)
            let malformed = try #require(try await radius.send(RADClient.login("gina", password: "hunter2")))
            #expect(malformed.code == "Access-Reject" && malformed.replyMessage == RADIUSAuthentication.Message.autoPassword)
            async let pushed = radius.send(RADClient.login("gina", password: "push"), timeout: 40)
            let (_, details, _) = try await device.waitForNewest()
            #expect(details.client.name == "Office VPN")
            _ = try await device.answer(factors: ["confirm"])
            #expect(try await pushed?.code == "Access-Accept")
        }
    }

    @Test("users: a name with a realm or domain is found when the client strips it; an unknown user and one without a device are rejected, or the latter accepted and audited when the client says so",
          arguments: Engine.available)
    func users(engine: Engine) async throws {
        try await Self.withRADIUS(engine) { server, radius in
            let id = try await server.createRADIUSClient(extra: ["strip_realm": true, "strip_domain": true])
            _ = try await server.createUser("hank")
            let unknown = try #require(try await radius.send(RADClient.login("nobody", password: "push")))
            #expect(unknown.code == "Access-Reject" && unknown.replyMessage == RADIUSAuthentication.Message.unknownUser)
            let unenrolled = try #require(try await radius.send(RADClient.login("CORP\\hank@corp.example", password: "push")))
            #expect(unenrolled.code == "Access-Reject" && unenrolled.replyMessage == RADIUSAuthentication.Message.notEnrolled)
            let patched = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/radius-clients/\(id)", json: ["unenrolled_users": "accept"])
            #expect(patched.status == 200)
            let accepted = try #require(try await radius.send(RADClient.login("hank@corp.example", password: "push")))
            #expect(accepted.code == "Access-Accept")
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?action=radius.unenrolled_accepted")
            let events = try #require(audit["items"] as? [[String: any Sendable]])
            #expect(events.count == 1)
        }
    }

    @Test("dropped unanswered and counted: a wrong secret, no Message-Authenticator, an address no client has; Status-Server is answered; Proxy-State comes back",
          arguments: Engine.available)
    func dropsAndStatus(engine: Engine) async throws {
        try await Self.withRADIUS(engine) { server, radius in
            _ = try await server.createRADIUSClient()
            _ = try await server.createUser("ivy")
            #expect(try await radius.send(RADClient.login("ivy", password: "push"), timeout: 1, secret: "not-the-secret-at-all") == nil)
            #expect(try await radius.send(RADClient.login("ivy", password: "push", messageAuthenticator: false), timeout: 1) == nil)
            let status = try #require(try await radius.send(["Message-Authenticator = 0x00"], command: "status"))
            #expect(status.code == "Access-Accept")
            let proxied = try #require(try await radius.send(
                RADClient.login("ivy", password: "push", extra: ["Proxy-State = 0x6869", "Proxy-State = 0x7468657265"])))
            #expect(proxied.code == "Access-Reject" && proxied.all("Proxy-State") == ["0x6869", "0x7468657265"])
            // A truncated packet, one whose Length claims more than came, and one over 4,096 octets.
            let header: [UInt8] = [1, 7, 0, 60] + [UInt8](repeating: 9, count: 16)
            #expect(try await sendDatagram(Array(header.prefix(10)), to: radius.port) == nil)
            #expect(try await sendDatagram(header + [1, 7, 0x61, 0x62, 0x63, 0x64, 0x65], to: radius.port) == nil)
            #expect(try await sendDatagram([1, 8, 0x13, 0x88] + [UInt8](repeating: 0, count: 4996), to: radius.port) == nil)
            // The largest packet RFC 2865 allows, 4,096 octets (Vendor-Specific attributes fill it), is read whole.
            var large = RADIUSPacket(.accessRequest, identifier: 9, authenticator: [UInt8](repeating: 3, count: 16), attributes: [
                RADIUSAttribute(type: RADIUSAttribute.messageAuthenticator, value: [UInt8](repeating: 0, count: 16)),
                RADIUSAttribute(type: RADIUSAttribute.userName, text: "ivy"),
                RADIUSAttribute(type: RADIUSAttribute.nasIdentifier, text: "vpn-gw-1"),
                RADIUSAttribute(type: RADIUSAttribute.state, value: [UInt8](repeating: 7, count: 16)),
            ])
            while large.encoded().count + 255 <= RADIUSPacket.maximumLength {
                large.attributes.append(RADIUSAttribute(type: 26, value: [0, 0, 0x7F, 0xFF] + [UInt8](repeating: 1, count: 249)))
            }
            let room = RADIUSPacket.maximumLength - large.encoded().count
            large.attributes.append(RADIUSAttribute(type: 26, value: [0, 0, 0x7F, 0xFF] + [UInt8](repeating: 1, count: room - 6)))
            #expect(large.encoded().count == RADIUSPacket.maximumLength)
            large.attributes[0].value = Array(HMAC<Insecure.MD5>.authenticationCode(
                for: large.encoded(), using: SymmetricKey(data: Array(Self.secret.utf8))))
            let largeAnswer = try await sendDatagram(large.encoded(), to: radius.port, wait: .seconds(20))
            if largeAnswer == nil {
                let metrics = String(decoding: try await server.call("GET", "/metrics").data, as: UTF8.self)
                Issue.record("no answer to 4,096 octets; /metrics: \(metrics.split(separator: "\n").filter { $0.contains("radius") })")
            }
            let answer = try #require(largeAnswer)
            #expect(answer.first == RADIUSPacket.Code.accessReject.rawValue && answer[1] == 9)
            let metrics = String(decoding: try await server.call("GET", "/metrics").data, as: UTF8.self)
            #expect(metrics.contains("countersign_radius_dropped_total{reason=\"malformed\"} 3"))
            #expect(metrics.contains("countersign_radius_dropped_total{reason=\"invalid_message_authenticator\"} 1"))
            #expect(metrics.contains("countersign_radius_dropped_total{reason=\"missing_message_authenticator\"} 1"))
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?action=radius.dropped")
            #expect((audit["items"] as? [[String: any Sendable]])?.count == 2)
        }
        try await Self.withRADIUS(engine) { server, radius in
            _ = try await server.createRADIUSClient(networks: ["192.0.2.0/24"])
            #expect(try await radius.send(RADClient.login("ivy", password: "push"), timeout: 1) == nil)
            let metrics = String(decoding: try await server.call("GET", "/metrics").data, as: UTF8.self)
            #expect(metrics.contains("countersign_radius_dropped_total{reason=\"unknown_source\"} 1"))
        }
    }

    /// Waits until the metric line appears in `/metrics`.
    func waitForMetric(_ server: TestServer, _ prefix: String) async throws {
        for _ in 0..<200 {
            let metrics = String(decoding: try await server.call("GET", "/metrics").data, as: UTF8.self)
            if metrics.contains(prefix) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("\(prefix) did not appear in /metrics")
    }
}
