import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// A new phone from the old one (docs/sdk.md §6): the old phone asks for a handover URI, the new
/// one enrolls with it and waits, showing a number, and the old one approves by picking that
/// number. Both ends through the SDK, over HTTP against a listening server.
@Suite("Handing over to a new device, approved on the old one with the number the new one shows")
struct HandoverTests {
    /// The number-and-enrollment a new device gets from a handover URI.
    static func enrollNew(_ server: TestServer, uri: String?, name: String = "Ada's new phone") async throws
        -> (CountersignAuthenticator, Enrollment) {
        let (kit, _) = server.authenticator()
        let enrollment = try await kit.enroll(uri: try #require(uri), deviceName: name, platform: .ios)
        return (kit, enrollment)
    }

    @Test("approved with the right number: the new device becomes a full one, named in its receipt as vouched for",
          arguments: Engine.available)
    func approved(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let old = try await server.enrolledUser("ada")
            let tablet = try await server.enrollDevice(for: old.userID, username: "ada", name: "tablet")
            let started = try await old.kit.startHandover(old.enrollment.id)
            #expect(started.status == .waiting && !started.retire)
            #expect(started.id.hasPrefix("hov_"))
            let waiting = try await old.kit.handover(started.id, of: old.enrollment.id)
            #expect(waiting.status == .waiting && waiting.newDevice == nil && waiting.choices == nil)
            #expect(waiting.enrollmentURI == nil, "the URI is given once")

            let (newKit, new) = try await Self.enrollNew(server, uri: started.enrollmentURI)
            let pending = try #require(new.handover)
            #expect(pending.vouchedBy == old.enrollment.deviceID)
            #expect(pending.id == started.id)
            #expect(pending.number.count == 2 && Int(pending.number).map { (10...99).contains($0) } == true)
            #expect(try await newKit.deviceStatus(new.id).status == "pending")
            #expect(try await newKit.checkHandover(new.id) == false)
            await #expect(throws: CountersignError.handoverPending) { try await newKit.pendingRequests(new.id) }
            await #expect(throws: CountersignError.handoverPending) { try await newKit.notices(new.id) }

            // The URI is spent.
            let (third, _) = server.authenticator()
            let replay = await #expect(throws: CountersignError.self) {
                _ = try await third.enroll(uri: try #require(started.enrollmentURI), deviceName: "third", platform: .ios)
            }
            guard case .enrollmentRejected(let code, _)? = replay else {
                Issue.record("a replayed URI was not refused: \(String(describing: replay))")
                return
            }
            #expect(code == "ticket_used")

            let awaiting = try await old.kit.handover(started.id, of: old.enrollment.id)
            #expect(awaiting.status == .awaitingApproval)
            #expect(awaiting.newDevice == HandoverState.NewDevice(deviceID: new.deviceID, name: "Ada's new phone", platform: .ios))
            let choices = try #require(awaiting.choices)
            #expect(choices.count == 3 && Set(choices).count == 3 && choices.contains(pending.number))
            #expect(try await old.kit.handover(started.id, of: old.enrollment.id).choices == choices, "the same at every call")

            // Only the device that started it sees or answers it.
            await #expect(throws: CountersignError.handoverNotFound) {
                try await tablet.kit.approveHandover(started.id, number: pending.number, of: tablet.enrollment.id)
            }
            await #expect(throws: CountersignError.handoverNotFound) { try await tablet.kit.handover(started.id, of: tablet.enrollment.id) }

            let approved = try await old.kit.approveHandover(started.id, number: pending.number, of: old.enrollment.id)
            #expect(approved.status == .approved && approved.choices == nil)
            #expect(try await newKit.checkHandover(new.id))
            #expect(try await newKit.enrollments().first?.handover == nil)
            await #expect(throws: CountersignError.handoverClosed) {
                try await old.kit.approveHandover(started.id, number: pending.number, of: old.enrollment.id)
            }

            // A full device now: it gets requests, and the user's other device was told of it.
            let client = try await server.createClient(name: "Portal")
            _ = try await server.startApproval(client, user: "ada")
            #expect(try await newKit.pendingRequests(new.id).count == 1)
            #expect(try await old.kit.pendingRequests(old.enrollment.id).count == 1, "the old device stays")
            #expect(try await tablet.kit.notices().contains { $0.kind == .deviceAdded && $0.subjectID == new.deviceID })
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?limit=100")
            let actions = (audit["items"] as? [[String: any Sendable]] ?? []).compactMap { $0["action"] as? String }
            #expect(actions.contains("device.handover_started") && actions.contains("device.handover_approved"))
        }
    }

    @Test("a wrong number refuses the handover and removes the new device; a malformed one is refused and changes nothing")
    func wrongNumber() async throws {
        try await TestServer.with(.sqlite) { server in
            let old = try await server.enrolledUser("bea")
            let started = try await old.kit.startHandover(old.enrollment.id)
            let (newKit, new) = try await Self.enrollNew(server, uri: started.enrollmentURI)
            let number = try #require(new.handover?.number)
            let malformed = await #expect(throws: CountersignError.self) {
                try await old.kit.approveHandover(started.id, number: "4a", of: old.enrollment.id)
            }
            guard case .server(400, "invalid_request", _)? = malformed else {
                Issue.record("a malformed number was not a 400: \(String(describing: malformed))")
                return
            }
            #expect(try await old.kit.handover(started.id, of: old.enrollment.id).status == .awaitingApproval)
            let wrong = number == "10" ? "11" : "10"
            await #expect(throws: CountersignError.wrongNumber) {
                try await old.kit.approveHandover(started.id, number: wrong, of: old.enrollment.id)
            }
            #expect(try await old.kit.handover(started.id, of: old.enrollment.id).status == .denied)
            await #expect(throws: CountersignError.deviceDeregistered) { try await newKit.checkHandover(new.id) }
            #expect(try await newKit.enrollments().isEmpty, "the removed enrollment is gone from the new device too")
            await #expect(throws: CountersignError.handoverClosed) {
                try await old.kit.approveHandover(started.id, number: number, of: old.enrollment.id)
            }
        }
    }

    @Test("retiring: once the new device is approved the old one is removed, there and at the server", arguments: Engine.available)
    func retire(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let old = try await server.enrolledUser("cai")
            let started = try await old.kit.startHandover(old.enrollment.id, retireThisDevice: true)
            #expect(started.retire)
            let (newKit, new) = try await Self.enrollNew(server, uri: started.enrollmentURI)
            let approved = try await old.kit.approveHandover(
                started.id, number: try #require(new.handover?.number), of: old.enrollment.id)
            #expect(approved.status == .approved)
            #expect(try await old.kit.enrollments().isEmpty)
            #expect(try await server.deviceRecord(old.enrollment.deviceID)["status"] as? String == "deleted")
            #expect(try await newKit.checkHandover(new.id))
            #expect(try await newKit.deviceStatus(new.id).status == "active")
        }
    }

    @Test("denied before a device enrolled, the URI is void; denied after, the new device is removed; ten minutes end it")
    func deniedAndExpired() async throws {
        try await TestServer.with(.sqlite) { server in
            let old = try await server.enrolledUser("dot")
            let first = try await old.kit.startHandover(old.enrollment.id)
            #expect(try await old.kit.denyHandover(first.id, of: old.enrollment.id).status == .denied)
            let refused = await #expect(throws: CountersignError.self) { _ = try await Self.enrollNew(server, uri: first.enrollmentURI) }
            guard case .enrollmentRejected("ticket_revoked", _)? = refused else {
                Issue.record("a denied handover's URI enrolled: \(String(describing: refused))")
                return
            }
            await #expect(throws: CountersignError.handoverClosed) { try await old.kit.denyHandover(first.id, of: old.enrollment.id) }

            let second = try await old.kit.startHandover(old.enrollment.id)
            let (secondKit, secondNew) = try await Self.enrollNew(server, uri: second.enrollmentURI)
            #expect(try await old.kit.denyHandover(second.id, of: old.enrollment.id).status == .denied)
            await #expect(throws: CountersignError.deviceDeregistered) { try await secondKit.checkHandover(secondNew.id) }

            let third = try await old.kit.startHandover(old.enrollment.id)
            let (thirdKit, thirdNew) = try await Self.enrollNew(server, uri: third.enrollmentURI)
            server.clock.advance(by: 601)
            await #expect(throws: CountersignError.handoverExpired) {
                try await old.kit.approveHandover(third.id, number: try #require(thirdNew.handover?.number), of: old.enrollment.id)
            }
            await #expect(throws: CountersignError.deviceDeregistered) { try await thirdKit.checkHandover(thirdNew.id) }
            #expect(try await old.kit.handover(third.id, of: old.enrollment.id).status == .expired)
        }
    }
}
