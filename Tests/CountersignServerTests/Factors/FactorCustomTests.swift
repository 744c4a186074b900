import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// The custom authenticator end to end: the app's data reaches the tenant's verifier in a
/// signed call, and its verdict decides — or, failing, decides nothing. The verifier is called
/// while the device's answer is handled, so most tests drive the router in memory with a real
/// receiver; the approval also runs on PostgreSQL, and the event needs its dispatcher.
@Suite("Custom authenticator and the tenant's verifier")
struct FactorCustomTests {
    private let customClass = [("acr_values", "urn:countersign:acr:custom")]

    @Test("the verifier's accept approves; it received the app's data, signed", arguments: Engine.available)
    func accepted(engine: Engine) async throws {
        try await TestServer.withReceiver(engine) { server, receiver in
            try await server.connect(.customVerifier, to: receiver)
            receiver.answer([.json(#"{"result":"accept"}"#)])
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            let authReqID = try await server.startApproval(client, user: "ada", extra: customClass)
            let answer = try await device.answer(factors: ["custom"], customData: "token-7731")
            #expect(answer.status == 200 && answer["status"] as? String == "approved", "\(answer.errorDescription ?? "")")
            let call = try #require(receiver.calls.last)
            #expect(call.signatureError == nil)
            #expect(call.json?["data"] as? String == "token-7731" && call.json?["username"] as? String == "ada")
            #expect(call.json?["device_id"] as? String == device.deviceID)
            server.clock.advance(by: 6)
            let tokens = try await server.token(client, authReqID)
            let claims = try server.verifiedClaims(try #require(tokens["id_token"] as? String), keys: try await server.jwks()).claims
            #expect(claims["acr"] as? String == "urn:countersign:acr:custom")
        }
    }

    @Test("the verifier's reject is a denial with reason custom_rejected")
    func rejected() async throws {
        try await TestServer.routedWithReceiver { server, receiver in
            try await server.connect(.customVerifier, to: receiver)
            receiver.answer([.json(#"{"result":"reject","reason":"token unknown"}"#)])
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            _ = try await server.startApproval(client, user: "ada", extra: customClass)
            let answer = try await device.answer(factors: ["custom"], customData: "token-0000")
            #expect(answer["status"] as? String == "denied" && answer["reason"] as? String == "custom_rejected")
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit")
            #expect(String(decoding: audit.data, as: UTF8.self).contains("token unknown"), "the verifier's reason is audited")
        }
    }

    @Test("the verifier asks for the PIN: the request waits for it, and a PIN then approves even where the policy forbids the fallback")
    func pinFallbackAsked() async throws {
        try await TestServer.routedWithReceiver { server, receiver in
            try await server.setPolicy(["custom_pin_fallback": false])
            try await server.connect(.customVerifier, to: receiver)
            receiver.answer([.json(#"{"result":"pin_fallback"}"#)])
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"), pin: true)
            _ = try await server.startApproval(client, user: "ada", extra: customClass)
            let early = try await device.answer(factors: ["pin"], pinKey: device.pin)
            #expect(early.status == 403 && early.error == "factor_required")
            let asked = try await device.answer(factors: ["custom"], customData: "token-7731")
            #expect(asked.status == 403 && asked.error == "pin_fallback_required")
            let pin = try await device.answer(factors: ["pin"], pinKey: device.pin)
            #expect(pin.status == 200 && pin["status"] as? String == "approved", "\(pin.errorDescription ?? "")")
        }
    }

    @Test("a verifier that fails, answers garbage or is missing decides nothing")
    func failsClosed() async throws {
        try await TestServer.routedWithReceiver { server, receiver in
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            _ = try await server.startApproval(client, user: "ada", extra: customClass)
            let missing = try await device.answer(factors: ["custom"], customData: "x")
            #expect(missing.status == 502 && missing.error == "verifier_unavailable")
            try await server.connect(.customVerifier, to: receiver)
            receiver.answer([.status(500), .json("not json"), .json(#"{"result":"maybe"}"#)])
            for _ in 0..<3 {
                let answer = try await device.answer(factors: ["custom"], customData: "x")
                #expect(answer.status == 502 && answer.error == "verifier_unavailable")
            }
            #expect(try await device.newest().envelope.id.hasPrefix("txn_"), "the request is still pending")
        }
    }

    @Test("'I did not request this' reaches the tenant's event receiver, signed", arguments: Engine.available)
    func notRequestedEvent(engine: Engine) async throws {
        try await TestServer.withReceiver(engine) { server, receiver in
            try await server.connect(.events, to: receiver)
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            _ = try await server.startApproval(client, user: "ada")
            _ = try await device.answer(.deny, factors: ["confirm"], reason: .notRequested)
            try await eventually("the event is delivered") { receiver.calls.contains { $0.event == "approval.not_requested" } }
            let call = try #require(receiver.calls.first { $0.event == "approval.not_requested" })
            #expect(call.signatureError == nil)
            let data = try #require(call.json?["data"] as? [String: any Sendable])
            #expect(data["username"] as? String == "ada" && data["device_id"] as? String == device.deviceID)
        }
    }
}
