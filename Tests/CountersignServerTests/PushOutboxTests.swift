import CountersignCore
import CountersignKit
import CountersignPushEmulator
import Foundation
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

    @Test("a push queued by a server that stopped before sending it is sent by the next start", arguments: Engine.available)
    func queuedPushSurvivesRestart(engine: Engine) async throws {
        let pki = try #require(PushTestPKI.shared)
        let clock = TestClock()
        let key = APNsTestKey()
        let apns = try await APNsEmulator.start(pki: pki, authentication: .token([key.providerKey]), now: clock.function)
        let scratch = try await ScratchDatabase.make(engine)
        let masterKey = TestServer.randomMasterKey()
        defer { Task { await scratch.destroy() } }

        let first = try await Self.start(scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: false)
        #expect(try await first.admin("PUT", "/admin/v1/tenants/default/push-credentials/apns-token", json: key.fields())
            .status == 200)
        let client = try await first.createClient(name: "Portal")
        let ida = try await first.enrolledUser("ida", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
        _ = try await first.startApproval(client, user: "ida")
        let requestID = try await first.newestRequest(of: ida)
        #expect(try await first.notificationStatuses(requestID, device: ida.enrollment.deviceID) == ["queued"])
        try await first.running.stop()
        #expect(apns.notifications().isEmpty)

        let second = try await Self.start(scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: true,
                                          adminKey: first.adminKey)
        try await eventually("the queued push was sent after the restart") { apns.acceptedCount == 1 }
        #expect(try await second.notificationStatuses(requestID, device: ida.enrollment.deviceID) == ["sent"])
        try await second.running.stop()
        try await apns.stop()
    }

    @Test("two servers on one PostgreSQL database send every queued push exactly once",
          .enabled(if: Engine.available.contains(.postgres)))
    func twoNodesShareTheOutbox() async throws {
        let pki = try #require(PushTestPKI.shared)
        let clock = TestClock()
        let key = APNsTestKey()
        let apns = try await APNsEmulator.start(pki: pki, authentication: .token([key.providerKey]), now: clock.function)
        let scratch = try await ScratchDatabase.make(.postgres)
        let masterKey = TestServer.randomMasterKey()
        defer { Task { await scratch.destroy() } }

        // Requests are queued while no node sends, then two nodes start sending at once.
        let writer = try await Self.start(scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: false)
        #expect(try await writer.admin("PUT", "/admin/v1/tenants/default/push-credentials/apns-token", json: key.fields())
            .status == 200)
        let client = try await writer.createClient(name: "Portal")
        let count = 40
        for index in 0..<count {
            _ = try await writer.enrolledUser("user\(index)", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            _ = try await writer.startApproval(client, user: "user\(index)")
        }
        let nodeA = try await Self.start(scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: true,
                                         data: "data-a", batch: 4)
        let nodeB = try await Self.start(scratch, masterKey: masterKey, clock: clock, pki: pki, apns: apns, dispatch: true,
                                         data: "data-b", batch: 4)
        try await eventually("every push was accepted") { apns.acceptedCount == count }
        try await Task.sleep(for: .milliseconds(300))
        #expect(apns.acceptedCount == count)
        #expect(apns.duplicateCount == 0)
        let ids = Set(apns.notifications().compactMap { $0.header("apns-id") })
        #expect(ids.count == count)
        for server in [writer, nodeA, nodeB] { try await server.running.stop() }
        try await apns.stop()
    }
}
