import CountersignRADIUS
import Foundation
import Testing
@testable import CountersignServer

/// Countersign's RADIUS authenticators against pyrad, an independent implementation: pyrad
/// builds Access-Requests (the password hidden, a Message-Authenticator), Countersign checks and
/// un-hides them, answers, and pyrad verifies the answers' Response Authenticator and
/// Message-Authenticator. Runs whenever python3 has pyrad (CI installs it); says so when not.
@Suite("RADIUS authenticators against pyrad")
struct RADIUSPeerTests {
    static let script = BuildProducts.packageRoot.appendingPathComponent("Tests/Peers/radius_peer.py")

    static let python: URL? = {
        guard let python = ChildProcess.find("python3"),
              (try? ChildProcess.runBlocking(python, ["-c", "import pyrad"])) != nil else {
            FileHandle.standardError.write(Data("RADIUSPeerTests: SKIPPED: python3 with pyrad is not available\n".utf8))
            return nil
        }
        return python
    }()

    static func peer(_ arguments: [String]) async throws -> [String: Any] {
        let output = try await ChildProcess.run(try #require(python), [script.path] + arguments)
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    static func request(secret: String, username: String, password: String, messageAuthenticator: Bool = true)
        async throws -> [UInt8] {
        let answer = try await peer(["request", secret, username, password]
                                    + (messageAuthenticator ? [] : ["--without-message-authenticator"]))
        return try Hex.bytes(try #require(answer["packet"] as? String))
    }

    @Test("pyrad's Access-Request: its Message-Authenticator verifies under the secret, and its password un-hides",
          arguments: ["correct horse battery staple", "pw", "exactly16octets!", "a password of more than thirty-two octets, Grüße"])
    func requestFromPyrad(password: String) async throws {
        guard Self.python != nil else { return }
        let secret = Array("s3cret-shared".utf8)
        let bytes = try await Self.request(secret: "s3cret-shared", username: "alice", password: password)
        let request = try RADIUSPacket(parsing: bytes)
        #expect(request.code == RADIUSPacket.Code.accessRequest.rawValue && request.text(RADIUSAttribute.userName) == "alice")
        #expect(RADIUSAuthenticators.messageAuthenticatorIsValid(request, secret: secret))
        #expect(RADIUSAuthenticators.userPassword(of: request, secret: secret) == Array(password.utf8))
        let accepted = try RADIUSAccessRequest(request, secret: secret)
        #expect(accepted.userName == "alice" && accepted.password == Array(password.utf8))
        #expect(accepted.nasIdentifier == "vpn-gw-1" && accepted.callingStationID == "203.0.113.9")
        // Under another secret, neither holds.
        #expect(!RADIUSAuthenticators.messageAuthenticatorIsValid(request, secret: Array("other".utf8)))
        #expect(RADIUSAuthenticators.userPassword(of: request, secret: Array("other".utf8)) != Array(password.utf8))
    }

    @Test("a request without a Message-Authenticator, with two, or with any octet changed does not verify")
    func tamperedRequests() async throws {
        guard Self.python != nil else { return }
        let secret = Array("s3cret-shared".utf8)
        let without = try RADIUSPacket(parsing: try await Self.request(
            secret: "s3cret-shared", username: "alice", password: "pw", messageAuthenticator: false))
        #expect(!RADIUSAuthenticators.messageAuthenticatorIsValid(without, secret: secret))
        #expect(throws: RADIUSRequestRefusal.drop(.missingMessageAuthenticator)) { try RADIUSAccessRequest(without, secret: secret) }
        let bytes = try await Self.request(secret: "s3cret-shared", username: "alice", password: "pw")
        var twice = try RADIUSPacket(parsing: bytes)
        twice.attributes.append(try #require(twice.attributes.first { $0.type == RADIUSAttribute.messageAuthenticator }))
        #expect(!RADIUSAuthenticators.messageAuthenticatorIsValid(twice, secret: secret))
        for index in bytes.indices where index != 2 && index != 3 {
            var changed = bytes
            changed[index] ^= 0x01
            guard let packet = try? RADIUSPacket(parsing: changed) else { continue }
            #expect(!RADIUSAuthenticators.messageAuthenticatorIsValid(packet, secret: secret), "octet \(index)")
        }
    }

    @Test("Countersign's Accept, Reject and Challenge verify in pyrad, Message-Authenticator first, attributes intact")
    func responsesVerifyInPyrad() async throws {
        guard Self.python != nil else { return }
        let secret = Array("s3cret-shared".utf8)
        let requestBytes = try await Self.request(secret: "s3cret-shared", username: "alice", password: "pw")
        let request = try RADIUSPacket(parsing: requestBytes)
        let cases: [(RADIUSPacket.Code, [RADIUSAttribute], String, [String])] = [
            (.accessAccept, [RADIUSAttribute(type: RADIUSAttribute.replyMessage, text: "Approved on your phone"),
                             RADIUSAttribute(type: RADIUSAttribute.class, value: Array("grp:vpn".utf8))],
             "Reply-Message", ["Approved on your phone"]),
            (.accessReject, [RADIUSAttribute(type: RADIUSAttribute.replyMessage, text: "Denied on your phone")],
             "Reply-Message", ["Denied on your phone"]),
            (.accessChallenge, [RADIUSAttribute(type: RADIUSAttribute.state, value: Array(repeating: 0xab, count: 32)),
                                RADIUSAttribute(type: RADIUSAttribute.replyMessage,
                                                text: "Approve on your phone and choose 47, then press Enter")],
             "State", [String(repeating: "ab", count: 32)]),
        ]
        for (code, attributes, name, values) in cases {
            let reply = RADIUSAuthenticators.response(code, to: request, attributes: attributes, secret: secret)
            let verdict = try await Self.peer(["verify", "s3cret-shared", Hex.string(requestBytes), Hex.string(reply)])
            #expect(verdict["code"] as? Int == Int(code.rawValue) && verdict["id"] as? Int == Int(request.identifier))
            #expect(verdict["response_authenticator_ok"] as? Bool == true, "\(code)")
            #expect(verdict["message_authenticator_ok"] as? Bool == true, "\(code)")
            #expect(verdict["message_authenticator_first"] as? Bool == true, "\(code)")
            #expect((verdict["attributes"] as? [String: [String]])?[name] == values, "\(code)")
            // Under another secret, pyrad refuses the same answer.
            let other = RADIUSAuthenticators.response(code, to: request, attributes: attributes, secret: Array("other".utf8))
            let refused = try await Self.peer(["verify", "s3cret-shared", Hex.string(requestBytes), Hex.string(other)])
            #expect(refused["response_authenticator_ok"] as? Bool == false && refused["message_authenticator_ok"] as? Bool == false)
        }
    }
}
