import CountersignCore
import CountersignKit
import CountersignPushEmulator
import Foundation
import Synchronization
import Testing
@testable import CountersignServer

/// The outbox survives a restart, and several server processes on one PostgreSQL database
/// share it without sending a notification twice.
@Suite("Push outbox", .enabled(if: PushTestPKI.available))
struct PushOutboxTests {
    /// Starts a server on `scratch` with the given master key, pointed at `apns`.
    static func start(_ scratch: ScratchDatabase, masterKey: String, clock: TestClock, pki: EmulatorPKI, apns: APNsEmulator,
                      dispatch: Bool, data: String = "data", batch: Int = 512, adminKey: String? = nil)
        async throws -> TestServer {
        var configuration = TestServer.configuration(scratch, clock: clock, masterKey: masterKey)
        configuration.dataDirectory = scratch.directory.appendingPathComponent(data)
        TestServer.pushConfiguration(&configuration, pki: pki, apns: apns)
        configuration.push.dispatch = dispatch
        configuration.push.batchSize = batch
        let server = try await CountersignServer.make(configuration: configuration, logger: testLogger)
        let running = try await server.start()
        return TestServer(running: running, scratch: scratch, clock: clock, adminKey: adminKey ?? server.bootstrapAdminKey ?? "")
    }

    /// Runs `body` with a local APNs, a scratch database and a master key, and stops every
    /// server it started (`started`) and the endpoint whatever happens.
    static func withOutbox(_ engine: Engine, _ body: (EmulatorPKI, APNsEmulator, APNsTestKey, ScratchDatabase, String, TestClock,
                                                      Started) async throws -> Void) async throws {
        let pki = try #require(PushTestPKI.shared)
        let clock = TestClock()
        let key = APNsTestKey()
        let apns = try await APNsEmulator.start(pki: pki, authentication: .token([key.providerKey]), now: clock.function)
        let scratch = try await ScratchDatabase.make(engine)
        let started = Started()
        do {
            try await body(pki, apns, key, scratch, TestServer.randomMasterKey(), clock, started)
        } catch {
            await started.stopAll()
            try? await apns.stop()
            await scratch.destroy()
            throw error
        }
        await started.stopAll()
        try await apns.stop()
        await scratch.destroy()
    }

    /// The servers a test started, to stop them all at its end.
    final class Started: Sendable {
        private let servers = Mutex<[CountersignServer.Running]>([])

        func add(_ server: TestServer) -> TestServer {
            servers.withLock { $0.append(server.running) }
            return server
        }

        /// Stops one server now (and not again at the end).
        func stop(_ server: TestServer) async throws {
            servers.withLock { $0.removeAll { $0 === server.running } }
            try await server.running.stop()
        }

        func stopAll() async {
            for server in servers.withLock({ $0 }) { try? await server.stop() }
        }
    }

    @Test("a push queued by a server that stopped before sending it is sent by the next start", arguments: Engine.available)
    func queuedPushSurvivesRestart(engine: Engine) async throws {
        try await Self.withOutbox(engine) { pki, apns, key, scratch, masterKey, clock, started in
            let first = started.add(
                try await Self.start(scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: false))
            #expect(try await first.admin("PUT", "/admin/v1/tenants/default/push-credentials/apns-token", json: key.fields())
                .status == 200)
            let client = try await first.createClient(name: "Portal")
            let ida = try await first.enrolledUser("ida", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            _ = try await first.startApproval(client, user: "ida")
            let requestID = try await first.newestRequest(of: ida)
            #expect(try await first.notificationStatuses(requestID, device: ida.enrollment.deviceID) == ["queued"])
            try await started.stop(first)
            #expect(apns.notifications().isEmpty)

            let second = started.add(try await Self.start(
                scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: true, adminKey: first.adminKey))
            try await eventually("the queued push was sent after the restart") { apns.acceptedCount == 1 }
            try await eventually("the push shows as sent") {
                try await second.notificationStatuses(requestID, device: ida.enrollment.deviceID) == ["sent"]
            }
        }
    }

    @Test("an alert whose node stopped mid-send and whose request was then answered is recorded as perhaps delivered",
          arguments: Engine.available)
    func cutOffAttemptIsNotCalledUnsent(engine: Engine) async throws {
        try await Self.withOutbox(engine) { pki, apns, key, scratch, masterKey, clock, started in
            let first = started.add(
                try await Self.start(scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: false))
            #expect(try await first.admin("PUT", "/admin/v1/tenants/default/push-credentials/apns-token", json: key.fields())
                .status == 200)
            let client = try await first.createClient(name: "Portal")
            let kim = try await first.enrolledUser("kim", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            _ = try await first.startApproval(client, user: "kim")
            let requestID = try await first.newestRequest(of: kim)
            // A node claims the alert and stops before it records what APNs said.
            let node = first.running.server
            let configuration = node.configuration.push
            let claimed = try await SQLPushOutboxRepository().claim(
                limit: 10, at: clock.now, leaseUntil: clock.now.addingTimeInterval(configuration.lease), on: node.database)
            #expect(claimed.count == 1)
            #expect(try await kim.device.decideNewest(.approve).status == 200)
            try await started.stop(first)

            clock.advance(by: configuration.lease + 1)
            let next = started.add(try await Self.start(
                scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: true, adminKey: first.adminKey))
            try await eventually("the taken-over alert is closed") {
                try await next.notificationStatuses(requestID, device: kim.enrollment.deviceID) == ["cancelled"]
            }
            let notification = try #require(
                (try await next.deliveries(requestID)).first?["notifications"] as? [[String: any Sendable]]).first
            #expect(notification?["last_error"] as? String
                == "answered after an attempt whose outcome was lost (its node stopped); it may have been delivered")
            #expect(notification?["attempts"] as? Int == 2)
            #expect(apns.notifications().isEmpty, "nothing is sent for an answered request")
        }
    }

    @Test("a restart, a second node and the same key set again all send with the one provider token",
          arguments: Engine.available)
    func providerTokenOutlivesRestartsAndIsSharedByNodes(engine: Engine) async throws {
        try await Self.withOutbox(engine) { pki, apns, key, scratch, masterKey, clock, started in
            let first = started.add(
                try await Self.start(scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: true))
            #expect(try await first.admin("PUT", "/admin/v1/tenants/default/push-credentials/apns-token", json: key.fields())
                .status == 200)
            let client = try await first.createClient(name: "Portal")
            _ = try await first.enrolledUser("jo", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            _ = try await first.startApproval(client, user: "jo")
            try await eventually("the first push was accepted") { apns.acceptedCount == 1 }
            try await started.stop(first)

            // A restart five minutes later: APNs would refuse a new token for this key for 15 more.
            clock.advance(by: 5 * 60)
            let restarted = started.add(try await Self.start(
                scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: true, adminKey: first.adminKey))
            _ = try await restarted.startApproval(client, user: "jo")
            try await eventually("the push after the restart was accepted") { apns.acceptedCount == 2 }

            // The same .p8 set again is a new credential, but the same key: the token stays.
            clock.advance(by: 60)
            #expect(try await restarted.admin("PUT", "/admin/v1/tenants/default/push-credentials/apns-token",
                                              json: key.fields()).status == 200)
            _ = try await restarted.startApproval(client, user: "jo")
            try await eventually("the push after the key was set again was accepted") { apns.acceptedCount == 3 }
            #expect(apns.providerTokens().count == 1)
            #expect(apns.notifications().count == 3, "no push was refused as TooManyProviderTokenUpdates")
        }
    }

    @Test("two servers on one PostgreSQL database send every queued push exactly once",
          .enabled(if: Engine.available.contains(.postgres)))
    func twoNodesShareTheOutbox() async throws {
        try await Self.withOutbox(.postgres) { pki, apns, key, scratch, masterKey, clock, started in
            // Requests are queued while no node sends, then two nodes start sending at once.
            let writer = started.add(
                try await Self.start(scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: false))
            #expect(try await writer.admin("PUT", "/admin/v1/tenants/default/push-credentials/apns-token", json: key.fields())
                .status == 200)
            let client = try await writer.createClient(name: "Portal")
            let count = 40
            for index in 0..<count {
                _ = try await writer.enrolledUser("user\(index)", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
                _ = try await writer.startApproval(client, user: "user\(index)")
            }
            for data in ["data-a", "data-b"] {
                _ = started.add(try await Self.start(
                    scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: true, data: data, batch: 4))
            }
            try await eventually("every push was accepted") { apns.acceptedCount == count }
            try await Task.sleep(for: .milliseconds(300))
            #expect(apns.acceptedCount == count)
            #expect(apns.duplicateCount == 0)
            let ids = Set(apns.notifications().compactMap { $0.header("apns-id") })
            #expect(ids.count == count)
        }
    }
}
