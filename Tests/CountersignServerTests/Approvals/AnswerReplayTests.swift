import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// A device's answer records its signature's nonce in the commit that records the decision,
/// not in one of its own. Whatever happens to the answer, the same signed call played again is
/// refused as `replayed_request` and changes nothing: not the decision, not a PIN count.
@Suite("Answers played again")
struct AnswerReplayTests {
    @Test("an answer played again is refused, and the decision stands", arguments: Engine.available)
    func acceptedAnswerReplayed(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            let authReqID = try await server.startApproval(client, user: "alice")
            let envelope = try #require(try await alice.device.inbox().first)
            let (details, plaintext) = try alice.device.open(envelope)
            let approval = try alice.device.answerRequest(
                envelope.id, response: try alice.device.response(for: details, plaintext: plaintext))
            #expect(try await server.send(approval).status == 200)

            let again = try await server.send(approval)
            #expect(again.status == 401 && again.error == "replayed_request", "\(again.errorDescription ?? "")")
            // A fresh call with the other decision is signed anew: it is told the request is decided...
            let denial = try alice.device.answerRequest(
                envelope.id, response: try alice.device.response(for: details, plaintext: plaintext, decision: .deny))
            let late = try await server.send(denial)
            #expect(late.status == 409 && late.error == "already_decided")
            // ...and that call, refused after its commit, cannot be played again either.
            #expect(try await server.send(denial).error == "replayed_request")

            server.clock.advance(by: 6)
            let tokens = try await server.token(client, authReqID)
            #expect(tokens.status == 200, "\(tokens.error ?? "")")
            let metrics = String(decoding: try await server.call("GET", "/metrics").data, as: UTF8.self)
            #expect(metrics.contains(#"countersign_device_signature_rejections_total{error="replayed_request"} 2"#), "\(metrics)")
        }
    }

    @Test("a refused answer uses up its nonce, and leaves the request to a good one", arguments: Engine.available)
    func refusedAnswerReplayed(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let bob = try await server.enrolledUser("bob")
            let authReqID = try await server.startApproval(client, user: "bob")
            let envelope = try #require(try await bob.device.inbox().first)
            let (details, plaintext) = try bob.device.open(envelope)
            let wrong = try bob.device.answerRequest(
                envelope.id, response: try bob.device.response(for: details, plaintext: plaintext, challenge: "not-the-challenge"))
            let refused = try await server.send(wrong)
            #expect(refused.status == 400 && refused.error == "challenge_mismatch", "\(refused.errorDescription ?? "")")
            let again = try await server.send(wrong)
            #expect(again.status == 401 && again.error == "replayed_request")
            // An answer to a request the device was not sent is refused at the first check;
            // its nonce is used up all the same.
            let unknown = try bob.device.answerRequest(
                "req_00000000000000000000000000", response: try bob.device.response(for: details, plaintext: plaintext))
            #expect(try await server.send(unknown).error == "unknown_request")
            #expect(try await server.send(unknown).error == "replayed_request")
            // So is that of an answer whose body is not an answer at all.
            let malformed = try server.deviceRequest(
                "POST", "/device/v1/requests/\(envelope.id)/response", body: Data(#"{"response":7}"#.utf8),
                deviceID: bob.device.id, signer: bob.device.keys.signer)
            #expect(try await server.send(malformed).status == 400)
            #expect(try await server.send(malformed).error == "replayed_request")

            #expect(try await bob.device.inbox().count == 1, "the request is still pending")
            let good = try await bob.device.answer(
                envelope.id, response: try bob.device.response(for: details, plaintext: plaintext))
            #expect(good.status == 200 && good["status"] as? String == "approved")
            server.clock.advance(by: 6)
            #expect(try await server.token(client, authReqID).status == 200)
        }
    }

    @Test("two copies of one answer at once: one is recorded, the other refused as replayed", arguments: Engine.available)
    func concurrentCopies(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let carol = try await server.enrolledUser("carol")
            for round in 0..<3 {
                _ = try await server.startApproval(client, user: "carol", bindingMessage: "Round \(round)")
                let envelope = try #require(try await carol.device.inbox().first)
                let (details, plaintext) = try carol.device.open(envelope)
                let approval = try carol.device.answerRequest(
                    envelope.id, response: try carol.device.response(for: details, plaintext: plaintext))
                async let first = server.send(approval)
                async let second = server.send(approval)
                let answers = try await [first, second]
                #expect(answers.map(\.status).sorted() == [200, 401], "\(answers.map { $0.error ?? "ok" })")
                #expect(answers.contains { $0.error == "replayed_request" })
            }
        }
    }

    @Test("a wrong PIN played again is refused before the PIN is checked, so it counts once")
    func wrongPINReplayedCountsOnce() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("dora"), pin: true)
            _ = try await server.startApproval(client, user: "dora", extra: [("acr_values", "urn:countersign:acr:pin")])
            let guess = P256.Signing.PrivateKey()
            let wrong = try await device.answerRequest(factors: ["pin"], pinKey: guess)
            let first = try await server.send(wrong)
            #expect(first.status == 403 && first.error == "wrong_pin" && first["attempts_remaining"] as? Int == 2)
            for _ in 0..<3 {
                let again = try await server.send(wrong)
                #expect(again.status == 401 && again.error == "replayed_request")
            }
            let next = try await device.answer(factors: ["pin"], pinKey: guess)
            #expect(next["attempts_remaining"] as? Int == 1, "the replays were not counted")
            let right = try await device.answer(factors: ["pin"], pinKey: device.pin)
            #expect(right.status == 200, "\(right.errorDescription ?? "")")
        }
    }
}
