import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The transmitter against an independent receiver (Tests/Peers/ssf_receiver.py, joserfc):
/// push delivery (RFC 8935) with retries after a failing receiver and no retry after a refusal,
/// poll delivery (RFC 8936) with long polls and acknowledgements, and no SET lost across a
/// restart. The receiver verifies every signature with the JWKS the server publishes.
@Suite("Shared Signals delivery to an independent receiver: push, poll, retries, restarts",
       .enabled(if: SSFReceiverHarness.available, "python3 with joserfc is not available (pip install joserfc)"))
struct SharedSignalsDeliveryTests {
    typealias Streams = SharedSignalsStreamTests
    static let audience = "siem.example.com"

    static func pushStream(_ server: TestServer, key: String, to receiver: SSFReceiverHarness, token: String? = "receiver-token")
        async throws -> String {
        var delivery: [String: any Sendable] = ["method": "urn:ietf:rfc:8935", "endpoint_url": receiver.endpoint]
        if let token { delivery["authorization_header"] = "Bearer \(token)" }
        let created = try await Streams.ssfCall(
            server, "POST", "/streams", key: key,
            json: ["events_requested": Streams.allEvents, "aud": audience, "delivery": delivery])
        #expect(created.status == 201, "\(created.errorDescription ?? "")")
        return try #require(created["stream_id"] as? String)
    }

    static func events(_ server: TestServer, stream: String) async throws -> [[String: any Sendable]] {
        let answer = try await server.admin("GET", "/admin/v1/tenants/default/ssf-streams/\(stream)/events")
        #expect(answer.status == 200)
        return answer["items"] as? [[String: any Sendable]] ?? []
    }

    @Test("pushed SETs verify with the published keys, carry the receiver's Authorization, and arrive after a failing receiver recovers",
          arguments: Engine.available)
    func pushWithRetries(engine: Engine) async throws {
        try await TestServer.with(engine, configure: { $0.webhooks.pollInterval = .milliseconds(50) }) { server in
            let receiver = try await SSFReceiverHarness.push(
                base: server.base, audience: Self.audience, failFirst: 2, token: "receiver-token")
            defer { receiver.remove() }
            let key = try await Streams.receiverKey(server)
            let stream = try await Self.pushStream(server, key: key, to: receiver)
            let ada = try await server.createUser("ada")
            _ = try await server.enrollFactorDevice(for: ada)

            try await eventually("the first attempt failed") {
                try await Self.events(server, stream: stream).first?["last_error"] as? String == "the receiver answered HTTP 503"
            }
            #expect(try receiver.received().isEmpty)
            server.clock.advance(by: 2)
            try await eventually("the second attempt failed") {
                let row = try await Self.events(server, stream: stream).first
                return row?["attempts"] as? Int == 2 && row?["status"] as? String == "queued"
            }
            server.clock.advance(by: 4)
            let received = try await receiver.waitFor(1)
            #expect(try receiver.rejected().isEmpty)
            let set = try #require(received.first)
            #expect(set.header["typ"] as? String == "secevent+jwt")
            #expect(set.claims["iss"] as? String == server.base && set.claims["aud"] as? String == Self.audience)
            #expect(set.event?.type == Streams.caep + "credential-change")
            #expect(set.event?.payload["credential_type"] as? String == "app")
            #expect((set.subject as NSDictionary?) == ["format": "iss_sub", "iss": server.base, "sub": ada] as NSDictionary)
            try await eventually("the SET shows as sent after three attempts") {
                let row = try await Self.events(server, stream: stream).first
                return row?["status"] as? String == "sent" && row?["attempts"] as? Int == 3
            }

            // The verification event on the same path.
            let verified = try await Streams.ssfCall(server, "POST", "/verify", key: key, json: ["stream_id": stream, "state": "abc"])
            #expect(verified.status == 204)
            let both = try await receiver.waitFor(2)
            #expect(both[1].event?.type == Streams.ssf + "verification" && both[1].event?.payload["state"] as? String == "abc")
        }
    }

    @Test("SETs held while a stream was paused arrive in the order they were recorded, as do SETs after a retry")
    func heldSETsKeepTheirOrder() async throws {
        try await TestServer.with(.sqlite, configure: { $0.webhooks.pollInterval = .milliseconds(50) }) { server in
            let receiver = try await SSFReceiverHarness.push(base: server.base, audience: Self.audience, failFirst: 1,
                                                             token: "receiver-token")
            defer { receiver.remove() }
            let key = try await Streams.receiverKey(server)
            let stream = try await Self.pushStream(server, key: key, to: receiver)
            #expect(try await Streams.ssfCall(server, "POST", "/status", key: key, json: ["stream_id": stream, "status": "paused"]).status == 200)
            let ada = try await server.createUser("ada")
            _ = try await server.enrollFactorDevice(for: ada)
            for status in ["disabled", "active", "disabled", "active"] {
                server.clock.advance(by: 1)
                #expect(try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(ada)", json: ["status": status]).status == 200)
            }
            let recorded = try await Self.events(server, stream: stream).compactMap { $0["id"] as? String }.sorted()
            #expect(recorded.count == 5)
            #expect(try await Streams.ssfCall(server, "POST", "/status", key: key, json: ["stream_id": stream, "status": "enabled"]).status == 200)
            // The first delivery is answered 503: none of the later ones may overtake it.
            try await eventually("the first attempt failed") {
                try await Self.events(server, stream: stream).contains { $0["last_error"] as? String == "the receiver answered HTTP 503" }
            }
            server.clock.advance(by: 2)
            let received = try await receiver.waitFor(5)
            #expect(received.compactMap(\.jti) == recorded, "in the order they were recorded")
            #expect(received.map { $0.event?.type } == [Streams.caep + "credential-change", Streams.risc + "account-disabled",
                                                       Streams.risc + "account-enabled", Streams.risc + "account-disabled",
                                                       Streams.risc + "account-enabled"])
        }
    }

    @Test("a SET the receiver refuses as invalid is not sent again; one it cannot take for now is")
    func refusalsAreFinal() async throws {
        try await TestServer.with(.sqlite, configure: { $0.webhooks.pollInterval = .milliseconds(50) }) { server in
            // The receiver expects another audience: it answers 400 invalid_audience.
            let receiver = try await SSFReceiverHarness.push(base: server.base, audience: "someone-else.example.com", token: nil)
            defer { receiver.remove() }
            let key = try await Streams.receiverKey(server)
            let stream = try await Self.pushStream(server, key: key, to: receiver, token: nil)
            _ = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            try await eventually("the SET was refused for good") {
                try await Self.events(server, stream: stream).first?["status"] as? String == "failed"
            }
            let row = try #require(try await Self.events(server, stream: stream).first)
            #expect(row["attempts"] as? Int == 1)
            #expect((row["last_error"] as? String)?.hasPrefix("the receiver answered HTTP 400 (invalid_audience: aud is") == true)
            #expect(try receiver.rejected().first?["err"] as? String == "invalid_audience")
            server.clock.advance(by: 600)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try receiver.rejected().count == 1, "not sent again")

            // A receiver that wants a token answers 401 without it: retried, as RFC 8935 allows.
            let guarded = try await SSFReceiverHarness.push(base: server.base, audience: Self.audience, token: "needed")
            defer { guarded.remove() }
            let second = try await Self.pushStream(server, key: key, to: guarded, token: "wrong")
            _ = try await server.enrollFactorDevice(for: try await server.createUser("bob"))
            try await eventually("the 401 is kept for a retry") {
                let row = try await Self.events(server, stream: second).first
                return row?["status"] as? String == "queued" && row?["last_error"] as? String == "the receiver answered HTTP 401"
            }
        }
    }

    @Test("the independent client long-polls, verifies and acknowledges; acknowledged SETs never come again",
          arguments: Engine.available)
    func pollWithTheIndependentClient(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let key = try await Streams.receiverKey(server)
            let created = try await Streams.ssfCall(
                server, "POST", "/streams", key: key, json: ["events_requested": Streams.allEvents, "aud": Self.audience])
            let stream = try #require(created["stream_id"] as? String)
            let pollURL = try #require((created["delivery"] as? [String: any Sendable])?["endpoint_url"] as? String)
            let ada = try await server.createUser("ada")
            _ = try await server.enrollFactorDevice(for: ada)
            _ = try await server.enrollFactorDevice(for: ada)

            // Two are waiting; the third arrives while the client long-polls for it.
            async let polled = SSFReceiverHarness.poll(
                base: server.base, pollURL: pollURL, key: key, audience: Self.audience, count: 3, maxEvents: 1)
            try await Task.sleep(for: .seconds(2))
            #expect(try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(ada)", json: ["status": "disabled"]).status == 200)
            let (sets, rejected, polls) = try await polled
            #expect(rejected.isEmpty)
            #expect(sets.map { $0.event?.type } == [Streams.caep + "credential-change", Streams.caep + "credential-change",
                                                   Streams.risc + "account-disabled"])
            #expect(polls >= 3)
            let rows = try await Self.events(server, stream: stream)
            #expect(rows.count == 3 && rows.allSatisfy { $0["status"] as? String == "acknowledged" })
            let again = try await Streams.poll(server, key: key, stream: stream)
            #expect(again.sets.isEmpty)
        }
    }

    @Test("a long poll does not hold up a graceful shutdown: it answers at once, empty")
    func longPollEndsWithTheServer() async throws {
        let clock = TestClock()
        let scratch = try await ScratchDatabase.make(.sqlite)
        let server = try await CountersignServer.make(
            configuration: TestServer.configuration(scratch, clock: clock, masterKey: TestServer.randomMasterKey()), logger: testLogger)
        let running = try await server.start()
        let test = TestServer(running: running, scratch: scratch, clock: clock, adminKey: server.bootstrapAdminKey ?? "")
        do {
            let key = try await Streams.receiverKey(test)
            let stream = try #require(try await Streams.pollStream(test, key: key)["stream_id"] as? String)
            async let answer = Streams.ssfCall(test, "POST", "/poll/\(stream)", key: key, json: [:])
            try await Task.sleep(for: .milliseconds(500))
            let stopping = ContinuousClock.now
            try await running.stop()
            let polled = try await answer
            #expect(polled.status == 200 && (polled["sets"] as? [String: any Sendable])?.isEmpty == true)
            #expect(ContinuousClock.now - stopping < .seconds(10), "the poll did not wait out its 25 seconds")
        } catch {
            try? await running.stop()
            await scratch.destroy()
            throw error
        }
        await scratch.destroy()
    }

    @Test("SETs recorded by a server that stopped before sending them are pushed by the next start",
          arguments: Engine.available)
    func noEventLostAcrossARestart(engine: Engine) async throws {
        let clock = TestClock()
        let scratch = try await ScratchDatabase.make(engine)
        let masterKey = TestServer.randomMasterKey()
        func start(dispatch: Bool, adminKey: String?) async throws -> TestServer {
            var configuration = TestServer.configuration(scratch, clock: clock, masterKey: masterKey)
            configuration.push.dispatch = dispatch
            configuration.webhooks.pollInterval = .milliseconds(50)
            // A receiver that is not there is retried until the deadline; keep it short.
            configuration.webhooks.deliveryTimeout = .seconds(2)
            let server = try await CountersignServer.make(configuration: configuration, logger: testLogger)
            let running = try await server.start()
            return TestServer(running: running, scratch: scratch, clock: clock, adminKey: adminKey ?? server.bootstrapAdminKey ?? "")
        }
        var running: [TestServer] = []
        var receiver: SSFReceiverHarness?
        do {
            let first = try await start(dispatch: false, adminKey: nil)
            running.append(first)
            let key = try await Streams.receiverKey(first)
            // Nothing listens yet: the receiver starts after the restart, on the port the stream names.
            let waiting = try await SSFReceiverHarness.push(base: first.base, audience: Self.audience, running: false)
            receiver = waiting
            let stream = try await Self.pushStream(first, key: key, to: waiting)
            for name in ["ada", "bob", "cy"] { _ = try await first.enrollFactorDevice(for: try await first.createUser(name)) }
            #expect(try await Self.events(first, stream: stream).count == 3)
            try await first.running.stop()
            running.removeAll()

            let second = try await start(dispatch: true, adminKey: first.adminKey)
            running.append(second)
            // The receiver reads the metadata of the server that now runs (its port is new).
            let late = try await SSFReceiverHarness.push(base: second.base, audience: Self.audience)
            receiver = late
            let updated = try await Streams.ssfCall(
                second, "PATCH", "/streams", key: key,
                json: ["stream_id": stream, "delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": late.endpoint,
                                                         "authorization_header": "Bearer receiver-token"]])
            #expect(updated.status == 200)
            // The attempts made before the change went to nobody and wait for a retry.
            try await eventually("the first attempts failed", within: 60) {
                try await Self.events(second, stream: stream).allSatisfy { $0["status"] as? String == "queued" }
            }
            clock.advance(by: 600)
            let received = try await late.waitFor(3)
            #expect(Set(received.compactMap(\.jti)).count == 3)
            #expect(received.allSatisfy { $0.claims["iss"] as? String == second.base },
                    "the issuer is the server's as it is now, not as it was when the SETs were recorded")
            #expect(try late.rejected().isEmpty)
        } catch {
            for server in running { try? await server.running.stop() }
            receiver?.remove()
            await scratch.destroy()
            throw error
        }
        for server in running { try await server.running.stop() }
        receiver?.remove()
        await scratch.destroy()
    }
}
