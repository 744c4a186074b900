import CountersignCore
import CountersignKit
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// A real CountersignKit device enrolling with the real server over HTTP.
@Suite("Enrollment, end to end")
struct EnrollmentIntegrationTests {
    @Test("a device enrolls, describes, renames, registers push, and unenrolls")
    func fullDeviceLifecycle() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("alice")
            let uri = try await server.enrollmentURI(for: userID)
            let (device, store) = server.authenticator()

            let enrollment = try await device.enroll(uri: uri, deviceName: "Alice's laptop", platform: .linux)
            #expect(enrollment.user.username == "alice")
            #expect(enrollment.server.absoluteString == server.base)
            #expect(try await device.enrollments() == [enrollment])

            let described = try await device.deviceStatus(enrollment.id)
            #expect(described.deviceID == enrollment.deviceID)
            #expect(described.name == "Alice's laptop")
            #expect(described.status == "active")

            let renamed = try await device.rename(enrollment.id, to: "Work laptop")
            #expect(renamed.name == "Work laptop")
            #expect(try await device.enrollments().first?.deviceName == "Work laptop")

            let token = String(repeating: "ab", count: 32)
            let pushed = try await device.updatePushToken(enrollment.id, to: PushRegistration(provider: .apns, token: token))
            #expect(pushed.push == .init(provider: .apns, tokenSuffix: String(token.suffix(8)), valid: true))
            #expect(try await device.updatePushToken(enrollment.id, to: nil).push == nil)

            // The server holds the public keys only: the ones in the device's key store.
            let keys = try await store.keys(for: enrollment.id)
            let stored = try #require(try await SQLDeviceRepository().find(
                id: enrollment.deviceID, on: server.database))
            #expect(stored.signingKey == ECPublicJWK(keys.signer.publicKey))
            #expect(stored.encryptionKey == ECPublicJWK(keys.agreement.publicKey))

            let listed = try await server.admin("GET", "/admin/v1/tenants/default/users/\(userID)/devices")
            #expect((listed["items"] as? [Any])?.count == 1)

            try await device.unenroll(enrollment.id)
            #expect(try await device.enrollments().isEmpty)
            let record = try await server.admin("GET", "/admin/v1/tenants/default/devices/\(enrollment.deviceID)")
            #expect(record["status"] as? String == "deleted")

            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?limit=200")
            let actions = Set(((audit["items"] as? [[String: Any]]) ?? []).compactMap { $0["action"] as? String })
            #expect(actions.isSuperset(of: [
                "user.created", "enrollment_ticket.created", "device.enrolled", "device.renamed",
                "device.push_token_updated", "device.push_token_removed", "device.unenrolled",
            ]))
        }
    }

    @Test("one user enrolls several devices; one app holds several enrollments")
    func severalDevicesAndEnrollments() async throws {
        try await TestServer.routed { server in
            let alice = try await server.createUser("alice")
            let bob = try await server.createUser("bob")
            let (phone, _) = server.authenticator()
            let (tablet, _) = server.authenticator()
            _ = try await phone.enroll(uri: try await server.enrollmentURI(for: alice), deviceName: "phone", platform: .ios)
            _ = try await tablet.enroll(uri: try await server.enrollmentURI(for: alice), deviceName: "tablet", platform: .ipados)
            _ = try await phone.enroll(uri: try await server.enrollmentURI(for: bob), deviceName: "phone", platform: .ios)
            #expect(try await phone.enrollments().map(\.user.username).sorted() == ["alice", "bob"])
            let devices = try await server.admin("GET", "/admin/v1/tenants/default/users/\(alice)/devices")
            #expect((devices["items"] as? [Any])?.count == 2)
        }
    }

    @Test("a ticket enrolls one device only")
    func ticketIsSingleUse() async throws {
        try await TestServer.routed { server in
            let uri = try await server.enrollmentURI(for: try await server.createUser("alice"))
            let (first, _) = server.authenticator()
            let (second, _) = server.authenticator()
            _ = try await first.enroll(uri: uri, deviceName: "first", platform: .linux)
            await #expect(throws: CountersignError.enrollmentRejected(
                code: "ticket_used", description: "the enrollment ticket has already been used")) {
                try await second.enroll(uri: uri, deviceName: "second", platform: .linux)
            }
            #expect(try await second.enrollments().isEmpty)
        }
    }

    @Test("an expired ticket is refused")
    func expiredTicketIsRefused() async throws {
        let clock = TestClock()
        try await TestServer.routed(clock: clock) { server in
            let uri = try await server.enrollmentURI(for: try await server.createUser("alice"))
            clock.advance(by: EnrollmentTicket.defaultLifetime + 1)
            let (device, _) = server.authenticator()
            await #expect(throws: CountersignError.enrollmentRejected(
                code: "ticket_expired", description: "the enrollment ticket has expired; ask for a new one")) {
                try await device.enroll(uri: uri, deviceName: "late", platform: .linux)
            }
        }
    }

    @Test("a ticket of another tenant is an invalid ticket here")
    func ticketFromAnotherTenantIsRefused() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"])
            #expect(created.status == 201)
            let uri = try await server.enrollmentURI(for: try await server.createUser("carol", tenant: "acme"), tenant: "acme")
            #expect(try EnrollmentURI(parsing: uri).server.absoluteString == server.base + "/t/acme")
            // Same ticket, presented to the default tenant (whose key the device then expects).
            let parsed = try EnrollmentURI(parsing: uri)
            let defaultTenant = try await server.admin("GET", "/admin/v1/tenants/default")
            let forged = EnrollmentURI(server: URL(string: server.base)!, ticket: parsed.ticket,
                                       serverKeyThumbprint: try #require(defaultTenant["device_key_thumbprint"] as? String))
            let (device, _) = server.authenticator()
            await #expect(throws: CountersignError.enrollmentRejected(
                code: "invalid_ticket", description: "the enrollment ticket is not valid for this server")) {
                try await device.enroll(uri: forged.description, deviceName: "x", platform: .linux)
            }
            // The ticket is still good where it belongs.
            _ = try await device.enroll(uri: uri, deviceName: "right tenant", platform: .linux)
        }
    }

    @Test("a device refuses a server whose key does not match the fingerprint, before spending the ticket")
    func deviceChecksServerFingerprint() async throws {
        try await TestServer.routed { server in
            let uri = try EnrollmentURI(parsing: try await server.enrollmentURI(for: try await server.createUser("alice")))
            let impostor = EnrollmentURI(server: uri.server, ticket: uri.ticket,
                                         serverKeyThumbprint: Data(repeating: 1, count: 32).base64URLEncodedString)
            let (device, _) = server.authenticator()
            await #expect(throws: CountersignError.serverKeyMismatch) {
                try await device.enroll(uri: impostor.description, deviceName: "x", platform: .linux)
            }
            #expect(try await device.enrollments().isEmpty)
            // The mismatch was found before the ticket was sent: it still enrolls where it belongs.
            _ = try await device.enroll(uri: uri.description, deviceName: "x", platform: .linux)
            let key = try await server.call("GET", "/device/v1/server-key")
            #expect((key["key"] as? [String: Any])?["crv"] as? String == "P-256")
        }
    }

    @Test("the default tenant enrolls at /t/default too")
    func defaultTenantAnswersUnderItsSlug() async throws {
        try await TestServer.routed { server in
            let uri = try EnrollmentURI(parsing: try await server.enrollmentURI(for: try await server.createUser("lee")))
            let viaSlug = EnrollmentURI(server: URL(string: server.base + "/t/default")!, ticket: uri.ticket,
                                        serverKeyThumbprint: uri.serverKeyThumbprint)
            let (device, _) = server.authenticator()
            let enrollment = try await device.enroll(uri: viaSlug.description, deviceName: "phone", platform: .android)
            #expect(enrollment.server.absoluteString == server.base + "/t/default")
            #expect(try await device.deviceStatus(enrollment.id).name == "phone")
        }
    }
}
