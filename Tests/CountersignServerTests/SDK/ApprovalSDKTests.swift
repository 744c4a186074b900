import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The approval loop with CountersignKit as the device, as an app uses it: the live stream,
/// the inbox, a push payload, and the typed errors.
@Suite("Approval loop with CountersignKit")
struct ApprovalSDKTests {
    @Test("a device holding its live stream receives a new request and approves it", arguments: Engine.available)
    func liveStreamDeliversRequests(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient(name: "Shop")
            let kate = try await server.enrolledUser("kate")
            let events = LiveEvents(kate.kit.liveRequests(kate.enrollment.id))
            try await server.waitForStream(of: kate.enrollment.deviceID)

            let authReqID = try await server.startApproval(client, user: "kate", bindingMessage: "Order 1234")
            guard case .request(let request) = try await events.next() else {
                Issue.record("the stream did not deliver the request first")
                return
            }
            let details = try await kate.kit.details(for: request)
            #expect(details.bindingMessage == "Order 1234")
            #expect(details.clientName == "Shop")
            #expect(details.username == "kate")

            let acknowledgement = try await kate.kit.approve(details)
            #expect(acknowledgement.status == "approved")
            guard case .closed(let closed) = try await events.next() else {
                Issue.record("the stream did not report the request closed")
                return
            }
            #expect(closed == RequestClosed(id: request.id, status: "approved"))
            events.cancel()

            server.clock.advance(by: 5)
            #expect(try await server.token(client, authReqID).status == 200)
        }
    }

    @Test("a live stream ends as soon as its device closes the connection, not at its next keepalive",
          arguments: Engine.available)
    func streamEndsWhenTheDeviceGoes(engine: Engine) async throws {
        // A keepalive far off: only the closed connection can end the stream within the wait.
        try await TestServer.with(engine, configure: { $0.liveStreamKeepalive = .seconds(600) }) { server in
            let kate = try await server.enrolledUser("kate")
            let deviceID = kate.enrollment.deviceID
            let events = LiveEvents(kate.kit.liveRequests(kate.enrollment.id))
            try await server.waitForStream(of: deviceID)
            events.cancel()
            try await waitUntil { !server.approvalEvents.hasSubscribers(deviceID: deviceID) }
        }
    }

    @Test("a stream reports a request closed as expired once the clock passes its expiry, and only once",
          arguments: Engine.available)
    func streamReportsExpiry(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let nora = try await server.enrolledUser("nora")
            let events = LiveEvents(nora.kit.liveRequests(nora.enrollment.id))
            try await server.waitForStream(of: nora.enrollment.deviceID)
            _ = try await server.startApproval(client, user: "nora", extra: [("requested_expiry", "30")])
            guard case .request(let request) = try await events.next() else {
                Issue.record("the stream did not deliver the request")
                return
            }
            server.clock.advance(by: 31)
            guard case .closed(let closed) = try await events.next() else {
                Issue.record("the stream did not report the request closed")
                return
            }
            #expect(closed == RequestClosed(id: request.id, status: "expired"))
            // A later request still arrives, and the expired one is not reported again.
            _ = try await server.startApproval(client, user: "nora", bindingMessage: "Second")
            guard case .request(let second) = try await events.next() else {
                Issue.record("the stream did not deliver the second request")
                return
            }
            #expect(second.id != request.id)
            events.cancel()
        }
    }

    @Test("a request pending when the stream opens is delivered first", arguments: Engine.available)
    func streamStartsWithThePendingRequests(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let liam = try await server.enrolledUser("liam")
            _ = try await server.startApproval(client, user: "liam", bindingMessage: "Earlier request")
            let events = LiveEvents(liam.kit.liveRequests(liam.enrollment.id))
            guard case .request(let request) = try await events.next() else {
                Issue.record("the stream did not deliver the pending request")
                return
            }
            #expect(try await liam.kit.details(for: request).bindingMessage == "Earlier request")
            events.cancel()
        }
    }

    @Test("the inbox and a push payload lead to the same request; a foreign push is not ours",
          arguments: Engine.available)
    func inboxAndPushPayload(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let mia = try await server.enrolledUser("mia")
            _ = try await server.startApproval(client, user: "mia")
            let pending = try await mia.kit.pendingRequests()
            #expect(pending.count == 1)
            let request = try #require(pending.first)
            #expect(request.enrollmentID == mia.enrollment.id)

            let payload = PushPayload(deviceID: mia.enrollment.deviceID, requestID: request.id,
                                      expiresAt: Int64(request.expiresAt.timeIntervalSince1970))
            let apns: [AnyHashable: Any] = [
                "aps": ["alert": ["title": "Sign-in request"]],
                "countersign": ["v": 1, "device_id": payload.deviceID, "request_id": payload.requestID, "exp": payload.expiresAt],
            ]
            #expect(try await mia.kit.request(fromPushPayload: apns) == request)
            let fcm: [AnyHashable: Any] = payload.fcmData
            #expect(try await mia.kit.request(fromPushPayload: fcm) == request)

            #expect(try await mia.kit.request(fromPushPayload: ["aps": ["alert": "Your parcel has shipped"]]) == nil)
            let otherDevice = PushPayload(deviceID: "dev_someone_else", requestID: request.id, expiresAt: payload.expiresAt)
            #expect(try await mia.kit.request(fromPushPayload: otherDevice.fcmData) == nil)
        }
    }

    @Test("a deny through the SDK gives the relying party access_denied", arguments: Engine.available)
    func denyThroughTheSDK(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let noah = try await server.enrolledUser("noah")
            let authReqID = try await server.startApproval(client, user: "noah")
            let request = try #require(try await noah.kit.pendingRequests().first)
            #expect(try await noah.kit.deny(try await noah.kit.details(for: request)).status == "denied")
            #expect(try await server.token(client, authReqID).error == "access_denied")
        }
    }

    @Test("the SDK reports a request answered on another device as alreadyAnswered, and a late one as expired",
          arguments: Engine.available)
    func typedErrorsForLostRaces(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let olga = try await server.enrolledUser("olga")
            let laptop = try await server.enrollDevice(for: olga.userID, username: "olga", name: "Olga's laptop")
            _ = try await server.startApproval(client, user: "olga")
            let onPhone = try await olga.kit.details(for: try #require(try await olga.kit.pendingRequests().first))
            let onLaptop = try await laptop.kit.details(for: try #require(try await laptop.kit.pendingRequests().first))
            _ = try await olga.kit.approve(onPhone)
            await #expect(throws: CountersignError.alreadyAnswered) { try await laptop.kit.deny(onLaptop) }

            _ = try await server.startApproval(client, user: "olga", extra: [("requested_expiry", "30")])
            let late = try await olga.kit.details(for: try #require(try await olga.kit.pendingRequests().first))
            server.clock.advance(by: 31)
            await #expect(throws: CountersignError.expired) { try await olga.kit.approve(late) }
        }
    }

    @Test("a device's live stream tells it of a phone added to its user, once; its 'not me' removes that phone",
          arguments: Engine.available)
    func streamCarriesNotices(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let kate = try await server.enrolledUser("kate")
            let events = LiveEvents(kate.kit.liveRequests(kate.enrollment.id))
            try await server.waitForStream(of: kate.enrollment.deviceID)

            let second = try await server.enrollDevice(for: kate.userID, username: "kate", name: "Kate's tablet")
            let secondEvents = LiveEvents(second.kit.liveRequests(second.enrollment.id))
            try await server.waitForStream(of: second.enrollment.deviceID)
            guard case .notice(let notice) = try await events.next() else {
                Issue.record("the stream did not tell of the phone added")
                return
            }
            #expect(notice.kind == .deviceAdded && notice.subjectID == second.enrollment.deviceID)
            #expect(notice.enrollmentID == kate.enrollment.id && notice.reportedAt == nil)
            #expect(notice.summary == "A new device, “Kate's tablet”, was added to your account.")
            #expect(try await kate.kit.notices(kate.enrollment.id).map(\.id) == [notice.id], "the list holds the same notice")

            // A third device: the second hears of it, the first once more; no one of itself.
            let third = try await server.enrollDevice(for: kate.userID, username: "kate", name: "Kate's laptop")
            guard case .notice(let toSecond) = try await secondEvents.next(),
                  case .notice(let toFirst) = try await events.next() else {
                Issue.record("the other devices' streams did not tell of the third")
                return
            }
            #expect(toSecond.id == toFirst.id && toSecond.subjectID == third.enrollment.deviceID)
            #expect(toSecond.enrollmentID == second.enrollment.id)

            let report = try await kate.kit.reportNotMe(notice)
            #expect(report.removed == .device)
            await #expect(throws: CountersignError.deviceDeregistered) {
                _ = try await second.kit.pendingRequests(second.enrollment.id)
            }
            events.cancel()
            secondEvents.cancel()
        }
    }

    @Test("a stream held by one node receives a request, and a notice, made on another (PostgreSQL)",
          .enabled(if: Engine.available.contains(.postgres)))
    func streamsWakeAcrossNodes() async throws {
        try await TestServer.with(.postgres) { nodeA in
            try await nodeA.withSecondNode { nodeB in
                let userID = try await nodeA.createUser("piet")
                // The ticket made through node B names node B: the device talks to B only.
                let ticket = try await nodeA.call(
                    "POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets", key: nodeA.adminKey,
                    headers: [:], base: nodeB.baseURL)
                let uri = try #require(ticket["enrollment_uri"] as? String)
                let server = URLComponents(string: uri)?.queryItems?.first { $0.name == "server" }?.value
                #expect(server == nodeB.baseURL)
                let (kit, _) = nodeA.authenticator()
                let enrollment = try await kit.enroll(uri: uri, deviceName: "Piet's phone", platform: .linux)
                let events = LiveEvents(kit.liveRequests(enrollment.id))
                try await waitUntil { nodeB.server.approvalEvents.hasSubscribers(deviceID: enrollment.deviceID) }

                let client = try await nodeA.createClient()
                _ = try await nodeA.startApproval(client, user: "piet", bindingMessage: "Made on node A")
                guard case .request(let request) = try await events.next() else {
                    Issue.record("node B's stream did not deliver the request made on node A")
                    return
                }
                #expect(try await kit.details(for: request).bindingMessage == "Made on node A")

                // A phone added through node A is news on node B's stream too.
                let added = try await nodeA.enrollDevice(for: userID, username: "piet", name: "Piet's tablet")
                guard case .notice(let notice) = try await events.next() else {
                    Issue.record("node B's stream did not tell of the phone added through node A")
                    return
                }
                #expect(notice.kind == .deviceAdded && notice.subjectID == added.enrollment.deviceID)
                events.cancel()
            }
        }
    }
}

/// Reads a live stream from a task of its own, so that a test can wait for the next event with
/// a deadline and stop listening when done.
final class LiveEvents: Sendable {
    private let events: AsyncThrowingStream<LiveRequestEvent, any Error>
    private let task: Task<Void, Never>

    init(_ stream: LiveRequests) {
        let (events, continuation) = AsyncThrowingStream.makeStream(of: LiveRequestEvent.self)
        self.events = events
        task = Task {
            do {
                for try await event in stream { continuation.yield(event) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    /// The next event, or a failure after `seconds`.
    func next(within seconds: Double = 10) async throws -> LiveRequestEvent {
        let events = events
        return try await withThrowingTaskGroup(of: LiveRequestEvent?.self) { group in
            group.addTask {
                var iterator = events.makeAsyncIterator()
                return try await iterator.next()
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let event = try await group.next() ?? nil else {
                throw StreamTimeout()
            }
            return event
        }
    }

    func cancel() { task.cancel() }

    struct StreamTimeout: Error {}
}

extension TestServer {
    /// Runs `body` with a second node on the same database and master key, stopped afterwards.
    func withSecondNode(_ body: (CountersignServer.Running) async throws -> Void) async throws {
        var configuration = configuration
        configuration.port = 0
        configuration.publicURL = nil
        let second = try await CountersignServer.make(configuration: configuration, logger: testLogger).start()
        do {
            try await body(second)
        } catch {
            try? await second.stop()
            throw error
        }
        try await second.stop()
    }
}

/// Polls `condition` every 10 ms for up to 10 s.
func waitUntil(_ condition: @Sendable () -> Bool) async throws {
    for _ in 0..<1000 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("the condition did not become true within 10 s")
}

extension TestServer {
    /// Waits until the device's live stream is open at the server.
    func waitForStream(of deviceID: String) async throws {
        try await waitUntil { approvalEvents.hasSubscribers(deviceID: deviceID) }
    }
}
