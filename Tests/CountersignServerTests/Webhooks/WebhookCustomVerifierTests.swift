import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

@Suite("The custom verifier: a signed call, a verdict, and failing closed")
struct WebhookCustomVerifierTests {
    static let call = CustomVerification(
        tenant: "default", requestID: "txn_01kjpq3m7z0r5w8y6t4v2s1x0a", clientID: "cli_01kjprzb001fz96qkgrcgwfjhv",
        userID: "usr_01kjprzb001fz96qkgrcgwfjht", username: "ada", deviceID: "dev_01kjpwg3pg32p3wwt3y0b8j32h",
        data: "badge:4711", bindingMessage: "Sign in to Payroll")

    static func verify(_ server: TestServer) async -> CustomVerdict {
        await server.server.customVerifier.verify(call, tenantID: server.defaultTenantID)
    }

    @Test("the verifier gets the call as signed JSON, with the event and a delivery id", arguments: Engine.available)
    func callIsSignedJSON(engine: Engine) async throws {
        try await TestServer.withReceiver(engine) { server, receiver in
            try await server.connect(.customVerifier, to: receiver)
            receiver.answer([.json(#"{"result":"accept"}"#)])
            #expect(await Self.verify(server) == .accept)
            let received = try #require(receiver.calls.first)
            #expect(receiver.calls.count == 1)
            #expect(received.signatureError == nil)
            #expect(received.path == "/hook")
            #expect(received.event == "factor.custom.verify")
            #expect(received.deliveryID?.hasPrefix("whd_") == true)
            #expect(received.headers["content-type"] == "application/json")
            let json = try #require(received.json)
            #expect(json["tenant"] as? String == "default")
            #expect(json["request_id"] as? String == Self.call.requestID)
            #expect(json["client_id"] as? String == Self.call.clientID)
            #expect(json["user_id"] as? String == Self.call.userID)
            #expect(json["username"] as? String == "ada")
            #expect(json["device_id"] as? String == Self.call.deviceID)
            #expect(json["data"] as? String == "badge:4711")
            #expect(json["binding_message"] as? String == "Sign in to Payroll")
        }
    }

    @Test("the verifier's result is the verdict", arguments: [
        (#"{"result":"accept"}"#, CustomVerdict.accept),
        (#"{"result":"accept","reason":"ignored"}"#, .accept),
        (#"{"result":"reject","reason":"badge revoked"}"#, .reject("badge revoked")),
        (#"{"result":"reject"}"#, .reject(nil)),
        (#"{"result":"pin_fallback"}"#, .pinFallback),
    ])
    func resultIsTheVerdict(body: String, verdict: CustomVerdict) async throws {
        try await TestServer.withReceiver(.sqlite) { server, receiver in
            try await server.connect(.customVerifier, to: receiver)
            receiver.answer([.json(body)])
            #expect(await Self.verify(server) == verdict)
        }
    }

    @Test("anything but a verdict is unavailable, and says why", arguments: [
        (WebhookReceiver.Reply.status(500), "answered HTTP 500"),
        (WebhookReceiver.Reply(status: 204, body: ""), "answered HTTP 204"),
        (WebhookReceiver.Reply(status: 302, headers: ["Location": "/accept"]), "answered HTTP 302"),
        (.json("accept"), "is not a JSON object with a string result"),
        (.json(#"{"verdict":"accept"}"#), "is not a JSON object with a string result"),
        (.json(#"{"result":true}"#), "is not a JSON object with a string result"),
        (.json(#"{"result":"maybe"}"#), "unknown result \"maybe\""),
        (.json(#"{"result":"accept","pad":"\#(String(repeating: "x", count: 17_000))"}"#), "larger than 16384 bytes"),
    ])
    func nonVerdictsAreUnavailable(reply: WebhookReceiver.Reply, why: String) async throws {
        try await TestServer.withReceiver(.sqlite) { server, receiver in
            try await server.connect(.customVerifier, to: receiver)
            receiver.answer([reply])
            let verdict = await Self.verify(server)
            guard case .unavailable(let reason) = verdict else {
                Issue.record("expected unavailable, got \(verdict)")
                return
            }
            #expect(reason.contains(why), "\(reason)")
            #expect(receiver.calls.count == 1, "a redirect is not followed")
        }
    }

    @Test("a verifier slower than the timeout is unavailable, and the caller waits no longer")
    func slowVerifierTimesOut() async throws {
        let configure: (inout ServerConfiguration) -> Void = { $0.webhooks.verifierTimeout = .milliseconds(300) }
        try await TestServer.withReceiver(.sqlite, configure: configure) { server, receiver in
            try await server.connect(.customVerifier, to: receiver)
            receiver.answer([WebhookReceiver.Reply(body: #"{"result":"accept"}"#, delay: .seconds(10))])
            let started = ContinuousClock.now
            let verdict = await Self.verify(server)
            // Far below the verifier's 10 s, with room for a machine busy running other tests.
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(verdict == .unavailable("the custom verifier call failed: no complete answer within 0.3 seconds"))
        }
    }

    @Test("a tenant without a custom-verifier webhook gets unavailable", arguments: Engine.available)
    func noWebhookIsUnavailable(engine: Engine) async throws {
        try await TestServer.withReceiver(engine) { server, receiver in
            try await server.connect(.events, to: receiver)
            #expect(await Self.verify(server) == .unavailable("the tenant has no custom-verifier webhook"))
            #expect(receiver.calls.isEmpty)
        }
    }

    @Test("a verifier that cannot be reached is unavailable")
    func unreachableVerifierIsUnavailable() async throws {
        // Refused connections are retried until the timeout, so it is kept short here.
        try await TestServer.withReceiver(.sqlite, configure: { $0.webhooks.verifierTimeout = .seconds(1) }) { server, _ in
            // A port that was just free: nothing listens there.
            let closed = try await WebhookReceiver.start(now: server.clock.function)
            let url = closed.url
            try await closed.stop()
            _ = try await server.setWebhook(.customVerifier, url: url)
            let verdict = await Self.verify(server)
            guard case .unavailable(let reason) = verdict else {
                Issue.record("expected unavailable, got \(verdict)")
                return
            }
            #expect(reason.hasPrefix("the custom verifier call failed: "), "\(reason)")
        }
    }
}
