import CountersignCore
import CountersignKit
import CountersignPushEmulator
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// Certificates for the local APNs and FCM endpoints, made once per test run with openssl.
enum PushTestPKI {
    static let shared: EmulatorPKI? = {
        guard EmulatorPKI.isAvailable else {
            FileHandle.standardError.write(Data("SKIPPED: push delivery tests need the openssl command\n".utf8))
            return nil
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-pki-\(UUID().uuidString)")
        return try? EmulatorPKI.make(in: directory)
    }()

    static var available: Bool { shared != nil }
}

/// A provider key as Apple issues it: 10-character key and team ids and a P-256 key in PEM.
struct APNsTestKey: Sendable {
    let keyID = "ABC123DEFG"
    let teamID = "TEAM123456"
    let key = P256.Signing.PrivateKey()

    var providerKey: APNsEmulator.APNsProviderKey {
        APNsEmulator.APNsProviderKey(keyID: keyID, teamID: teamID, publicKey: key.publicKey)
    }

    /// The body of `PUT …/push-credentials/apns-token`.
    func fields(topic: String = "com.example.bank", environment: String = "production") -> [String: any Sendable] {
        ["key_id": keyID, "team_id": teamID, "private_key": key.pemRepresentation, "topic": topic, "environment": environment]
    }
}

/// A made-up APNs device token: 32 random bytes in hex, as iOS hands them out.
func apnsDeviceToken() -> String {
    Secrets.randomBytes(32).map { String(format: "%02x", $0) }.joined()
}

extension TestServer {
    /// Points the server's APNs (both environments) and FCM at local endpoints trusted through
    /// the test CA, and polls the outbox often so that tests wait little.
    static func pushConfiguration(_ configuration: inout ServerConfiguration, pki: EmulatorPKI,
                                  apns: APNsEmulator? = nil, fcm: FCMEmulator? = nil) {
        configuration.push.trustedCAFile = pki.caCertificatePath
        if let apns {
            configuration.push.apnsProductionURL = apns.baseURL
            configuration.push.apnsSandboxURL = apns.baseURL
        }
        if let fcm {
            configuration.push.fcmURL = fcm.baseURL
            configuration.push.fcmTokenURL = fcm.tokenURL
        }
        configuration.push.pollInterval = .milliseconds(50)
        // One connection per credential: a connection that fails to open on a loaded machine is
        // retried after a backoff on the test clock, which these tests move by hand.
        configuration.push.connectionsPerCredential = 1
    }

    /// A user with one device that registered `push` at enrollment.
    func enrolledUser(_ username: String, push: PushRegistration, deviceName: String? = nil) async throws -> EnrolledUser {
        let userID = try await createUser(username)
        return try await enrollDevice(for: userID, username: username, push: push, name: deviceName ?? "\(username)'s phone")
    }

    func enrollDevice(for userID: String, username: String, push: PushRegistration, name: String) async throws -> EnrolledUser {
        let (kit, store) = authenticator()
        let enrollment = try await kit.enroll(
            uri: try await enrollmentURI(for: userID), deviceName: name, platform: .ios, push: push)
        return EnrolledUser(userID: userID, username: username, kit: kit, enrollment: enrollment,
                            device: try await RawDevice(server: self, enrollment: enrollment, store: store))
    }

    /// The delivery view of one request.
    func deliveries(_ requestID: String) async throws -> [[String: any Sendable]] {
        let answer = try await admin("GET", "/admin/v1/tenants/default/approvals/\(requestID)/deliveries")
        #expect(answer.status == 200, "deliveries: \(answer.errorDescription ?? "")")
        return answer["devices"] as? [[String: any Sendable]] ?? []
    }

    /// The statuses of the notifications of one device for one request, oldest first.
    func notificationStatuses(_ requestID: String, device: String) async throws -> [String] {
        let devices = try await deliveries(requestID)
        let notifications = devices.first { $0["device_id"] as? String == device }?["notifications"] as? [[String: any Sendable]]
        return (notifications ?? []).compactMap { $0["status"] as? String }
    }

    /// The admin view of a device.
    func deviceRecord(_ id: String) async throws -> [String: any Sendable] {
        let answer = try await admin("GET", "/admin/v1/tenants/default/devices/\(id)")
        #expect(answer.status == 200)
        return answer.json ?? [:]
    }

    /// The newest request id in the device's inbox.
    func newestRequest(of user: EnrolledUser) async throws -> String {
        try #require(try await user.device.inbox().first).id
    }
}

/// Waits until `condition` holds, checking every 20 ms, for at most `seconds` (generous: CI
/// machines are shared).
func eventually(_ what: String, within seconds: Double = 30, _ condition: () async throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("timed out waiting until \(what)")
    throw CancellationError()
}
