import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

@Suite("Event webhooks: queued with the change, delivered signed, retried, kept across restarts")
struct WebhookEventTests {
    @Test("a queued event is delivered once, signed, in the documented envelope", arguments: Engine.available)
    func eventIsDeliveredOnce(engine: Engine) async throws {
        try await TestServer.withReceiver(engine) { server, receiver in
            try await server.connect(.events, to: receiver)
            #expect(try await server.enqueueEvent("approval.not_requested", data: notRequestedData()))
            try await eventually("the event arrived") { receiver.calls.count == 1 }
            try await eventually("the event shows as sent") {
                try await server.webhookDeliveries().first?["status"] as? String == "sent"
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(receiver.calls.count == 1)

            let received = try #require(receiver.calls.first)
            #expect(received.signatureError == nil)
            #expect(received.event == "approval.not_requested")
            let json = try #require(received.json)
            #expect(Set(json.keys) == ["id", "event", "tenant", "created_at", "data"])
            #expect(json["id"] as? String == received.deliveryID)
            #expect(json["event"] as? String == "approval.not_requested")
            #expect(json["tenant"] as? String == "default")
            #expect((json["created_at"] as? String).flatMap(Timestamps.parse) != nil)
            let data = try #require(json["data"] as? [String: any Sendable])
            #expect(data["request_id"] as? String == "txn_01kjpq3m7z0r5w8y6t4v2s1x0a")
            #expect(data["username"] as? String == "ada")

            let delivery = try #require(try await server.webhookDeliveries().first)
            #expect(delivery["id"] as? String == received.deliveryID)
            #expect(delivery["event"] as? String == "approval.not_requested")
            #expect(delivery["attempts"] as? Int == 1)
            #expect(delivery["sent_at"] is String)
            #expect(delivery["last_error"] == nil)
            #expect(delivery["data"] == nil, "the deliveries view never shows the body")
        }
    }

    @Test("an event the receiver refused is retried after the backoff with the same body, then delivered",
          arguments: Engine.available)
    func refusedEventIsRetried(engine: Engine) async throws {
        try await TestServer.withReceiver(engine) { server, receiver in
            try await server.connect(.events, to: receiver)
            receiver.answer([.status(500)])
            try await server.enqueueEvent("approval.not_requested", data: notRequestedData())
            try await eventually("the first attempt was refused") {
                try await server.webhookDeliveries().first?["last_error"] as? String == "the receiver answered HTTP 500"
            }
            let queued = try #require(try await server.webhookDeliveries().first)
            #expect(queued["status"] as? String == "queued")
            #expect(queued["attempts"] as? Int == 1)
            let due = try #require((queued["next_attempt_at"] as? String).flatMap(Timestamps.parse))
            #expect(abs(due.timeIntervalSince(server.clock.now) - 2) < 0.01, "the first retry waits 2 s")
            try await Task.sleep(for: .milliseconds(200))
            #expect(receiver.calls.count == 1, "nothing is sent before the retry is due")

            server.clock.advance(by: 2.5)
            try await eventually("the retry was delivered") {
                try await server.webhookDeliveries().first?["status"] as? String == "sent"
            }
            let calls = receiver.calls
            #expect(calls.count == 2)
            #expect(calls.allSatisfy { $0.signatureError == nil })
            #expect(calls[0].body == calls[1].body)
            #expect(calls[0].deliveryID == calls[1].deliveryID)
            let delivered = try #require(try await server.webhookDeliveries().first)
            #expect(delivered["attempts"] as? Int == 2)
            #expect(delivered["last_error"] == nil)
        }
    }

    @Test("an event refused every time is given up after the last attempt, with the last error")
    func eventIsGivenUp() async throws {
        try await TestServer.withReceiver(.sqlite, configure: { $0.webhooks.maximumAttempts = 3 }) { server, receiver in
            try await server.connect(.events, to: receiver)
            receiver.answer([], then: .status(503))
            try await server.enqueueEvent("approval.not_requested", data: notRequestedData())
            for attempt in 1...3 {
                try await eventually("attempt \(attempt) was made") { receiver.calls.count == attempt }
                try await eventually("attempt \(attempt) was recorded") {
                    try await server.webhookDeliveries().first?["status"] as? String != "sending"
                }
                server.clock.advance(by: 600)
            }
            try await eventually("the event was given up") {
                try await server.webhookDeliveries().first?["status"] as? String == "failed"
            }
            let failed = try #require(try await server.webhookDeliveries().first)
            #expect(failed["attempts"] as? Int == 3)
            #expect(failed["last_error"] as? String == "the receiver answered HTTP 503")
            try await Task.sleep(for: .milliseconds(200))
            #expect(receiver.calls.count == 3)
        }
    }

    @Test("retries wait 2 s, doubling, up to 5 minutes")
    func backoffDoublesUpToFiveMinutes() {
        let configuration = WebhookConfiguration()
        #expect((1...10).map(configuration.retryDelay(afterAttempts:)) == [2, 4, 8, 16, 32, 64, 128, 256, 300, 300])
        #expect(configuration.maximumAttempts == 10)
    }

    @Test("a tenant without an events webhook gets no rows")
    func nothingIsQueuedWithoutAnEventsWebhook() async throws {
        try await TestServer.routedWithReceiver { server, receiver in
            #expect(try await server.enqueueEvent("approval.not_requested", data: notRequestedData()) == false)
            try await server.connect(.customVerifier, to: receiver)
            #expect(try await server.enqueueEvent("approval.not_requested", data: notRequestedData()) == false)
            #expect(try await server.webhookDeliveries().isEmpty)
            let rows = try await server.database.run("SELECT id FROM webhook_outbox")
            // Nothing queued is nothing a dispatcher could ever send.
            #expect(rows.isEmpty)
        }
    }

    @Test("an event queued in a transaction that rolls back is never sent", arguments: Engine.available)
    func rolledBackEventIsNotSent(engine: Engine) async throws {
        struct Abandoned: Error {}
        try await TestServer.withReceiver(engine) { server, receiver in
            try await server.connect(.events, to: receiver)
            let events = server.tenantEvents
            let (tenantID, at) = (server.defaultTenantID, server.clock.now)
            await #expect(throws: Abandoned.self) {
                try await server.database.transaction { executor in
                    try await events.enqueue(
                        event: "approval.not_requested", payload: notRequestedData(), tenantID: tenantID, at: at, on: executor)
                    throw Abandoned()
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(receiver.calls.isEmpty)
            #expect(try await server.webhookDeliveries().isEmpty)
        }
    }

    @Test("an event queued by a server that stopped before sending it is delivered by the next start",
          arguments: Engine.available)
    func queuedEventSurvivesRestart(engine: Engine) async throws {
        let clock = TestClock()
        let receiver = try await WebhookReceiver.start(now: clock.function)
        let scratch = try await ScratchDatabase.make(engine)
        let masterKey = TestServer.randomMasterKey()
        func start(dispatch: Bool, adminKey: String?) async throws -> TestServer {
            var configuration = TestServer.configuration(scratch, clock: clock, masterKey: masterKey)
            configuration.push.dispatch = dispatch
            configuration.webhooks.pollInterval = .milliseconds(50)
            let server = try await CountersignServer.make(configuration: configuration, logger: testLogger)
            let running = try await server.start()
            return TestServer(running: running, scratch: scratch, clock: clock,
                              adminKey: adminKey ?? server.bootstrapAdminKey ?? "")
        }
        var running: [TestServer] = []
        do {
            let first = try await start(dispatch: false, adminKey: nil)
            running.append(first)
            try await first.connect(.events, to: receiver)
            #expect(try await first.enqueueEvent("approval.not_requested", data: notRequestedData()))
            try await first.running.stop()
            running.removeAll()
            #expect(receiver.calls.isEmpty)

            let second = try await start(dispatch: true, adminKey: first.adminKey)
            running.append(second)
            try await eventually("the queued event was delivered after the restart") { receiver.calls.count == 1 }
            #expect(receiver.calls.first?.signatureError == nil)
            try await eventually("the event shows as sent") {
                try await second.webhookDeliveries().first?["status"] as? String == "sent"
            }
        } catch {
            for server in running { try? await server.running.stop() }
            try? await receiver.stop()
            await scratch.destroy()
            throw error
        }
        for server in running { try await server.running.stop() }
        try await receiver.stop()
        await scratch.destroy()
    }
}
