import CountersignCore
import CountersignKit
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// Every way a device-signed request can be wrong is a 401 naming what was wrong, and changes
/// nothing: the device's name stays as it was. The router is driven in memory; the replay check,
/// whose ledger of seen signatures is storage, also runs on PostgreSQL.
@Suite("Device-signed requests")
struct DeviceSignatureTests {
    enum Forgery: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case noSignature, otherScheme, garbage, wrongKey, unknownDevice, timeTooOld, timeInFuture, alteredBody
        case alteredURL, otherMethod, otherTenantPath

        var testDescription: String { rawValue }

        var expectedError: String {
            switch self {
            case .noSignature: "missing_signature"
            case .otherScheme, .garbage: "malformed_signature"
            case .wrongKey: "invalid_signature"
            case .unknownDevice, .otherTenantPath: "unknown_device"
            case .timeTooOld, .timeInFuture: "request_expired"
            case .alteredBody: "body_mismatch"
            case .alteredURL, .otherMethod: "request_mismatch"
            }
        }
    }

    @Test("a forged or mismatched signature is refused with 401", arguments: Forgery.allCases)
    func forgeryIsRefused(forgery: Forgery) async throws {
        let clock = TestClock()
        try await TestServer.routed(clock: clock) { server in
            _ = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"])
            let (device, store) = server.authenticator()
            let enrollment = try await device.enroll(
                uri: try await server.enrollmentURI(for: try await server.createUser("erin")), deviceName: "original",
                platform: .linux)
            let signer = try await store.keys(for: enrollment.id).signer

            var path = "/device/v1/self"
            let body = Data(#"{"name":"forged"}"#.utf8)
            var signedMethod = "PATCH"
            var signedURL = server.base + path
            var signedBody = body
            var signingKey: any ES256Signer = signer
            var deviceID = enrollment.deviceID
            var date = clock.now
            switch forgery {
            case .wrongKey: signingKey = P256.Signing.PrivateKey()
            case .unknownDevice: deviceID = "dev_00000000000000000000000000"
            case .timeTooOld: date = date.addingTimeInterval(-301)
            case .timeInFuture: date = date.addingTimeInterval(301)
            case .alteredBody: signedBody = Data(#"{"name":"benign"}"#.utf8)
            case .alteredURL: signedURL += "?x=1"
            case .otherMethod: signedMethod = "GET"
            case .otherTenantPath:
                path = "/t/acme/device/v1/self"
                signedURL = server.base + path
            default: break
            }
            let signature = try DeviceRequestSignature.sign(
                method: signedMethod, url: signedURL, body: signedBody, deviceID: deviceID, signer: signingKey, now: date)
            var headers: [String: String] = [:]
            switch forgery {
            case .noSignature: break
            case .otherScheme: headers["Authorization"] = "Bearer \(signature.jws.serialized)"
            case .garbage: headers["Authorization"] = "Device e30.e30.AAAA"
            default: headers["Authorization"] = signature.authorizationHeader
            }
            let answer = try await server.call("PATCH", path, body: body, headers: headers)
            #expect(answer.status == 401)
            #expect(answer.error == forgery.expectedError, "\(answer.errorDescription ?? "")")
            #expect(answer.header("WWW-Authenticate")?.hasPrefix("Device") == true)
            #expect(try await device.deviceStatus(enrollment.id).name == "original")
        }
    }

    @Test("a signature is accepted once", arguments: Engine.available)
    func replayIsRefused(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let (device, store) = server.authenticator()
            let enrollment = try await device.enroll(
                uri: try await server.enrollmentURI(for: try await server.createUser("frank")), deviceName: "phone",
                platform: .linux)
            let signature = try DeviceRequestSignature.sign(
                method: "GET", url: server.base + "/device/v1/self", body: Data(), deviceID: enrollment.deviceID,
                signer: try await store.keys(for: enrollment.id).signer, now: server.clock.now)
            let first = try await server.call("GET", "/device/v1/self", headers: ["Authorization": signature.authorizationHeader])
            #expect(first.status == 200)
            let again = try await server.call("GET", "/device/v1/self", headers: ["Authorization": signature.authorizationHeader])
            #expect(again.status == 401)
            #expect(again.error == "replayed_request")
        }
    }

    @Test("a device removed by an administrator is told it is deregistered")
    func deletedDeviceIsDeregistered() async throws {
        try await TestServer.routed { server in
            let (device, store) = server.authenticator()
            let enrollment = try await device.enroll(
                uri: try await server.enrollmentURI(for: try await server.createUser("grace")), deviceName: "phone",
                platform: .linux)
            let deleted = try await server.admin("DELETE", "/admin/v1/tenants/default/devices/\(enrollment.deviceID)")
            #expect(deleted.status == 204)
            // Only the device itself learns that it was removed, with a notice signed for its request.
            let forged = try DeviceRequestSignature.sign(
                method: "GET", url: server.base + "/device/v1/self", body: Data(), deviceID: enrollment.deviceID,
                signer: P256.Signing.PrivateKey(), now: server.clock.now)
            let probe = try await server.call("GET", "/device/v1/self", headers: ["Authorization": forged.authorizationHeader])
            #expect(probe.error == "invalid_signature")
            #expect(probe["deregistration"] == nil)
            let genuine = try DeviceRequestSignature.sign(
                method: "GET", url: server.base + "/device/v1/self", body: Data(), deviceID: enrollment.deviceID,
                signer: try await store.keys(for: enrollment.id).signer, now: server.clock.now)
            let told = try await server.call("GET", "/device/v1/self", headers: ["Authorization": genuine.authorizationHeader])
            #expect(told.error == "device_deregistered")
            let notice = try #require(told["deregistration"] as? String)
            #expect(DeregistrationNotice.verified(notice, serverKey: enrollment.serverKey, deviceID: enrollment.deviceID,
                                                  nonce: genuine.nonce)?.status == .deleted)
            await #expect(throws: CountersignError.deviceDeregistered) {
                try await device.deviceStatus(enrollment.id)
            }
            // The SDK forgets an enrollment the server no longer knows.
            #expect(try await device.enrollments().isEmpty)
            let again = try await server.admin("DELETE", "/admin/v1/tenants/default/devices/\(enrollment.deviceID)")
            #expect(again.status == 409)
        }
    }

    @Test("deleting a user removes its devices, records each, and the device learns it")
    func deletedUserTakesItsDevices() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("ivy")
            let (device, _) = server.authenticator()
            let enrollment = try await device.enroll(
                uri: try await server.enrollmentURI(for: userID), deviceName: "phone", platform: .linux)
            #expect(try await server.admin("DELETE", "/admin/v1/tenants/default/users/\(userID)").status == 204)
            await #expect(throws: CountersignError.deviceDeregistered) {
                try await device.deviceStatus(enrollment.id)
            }
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?limit=5")
            let events = try #require(audit["items"] as? [[String: Any]])
            #expect(events.contains { $0["action"] as? String == "device.deleted" && $0["target_id"] as? String == enrollment.deviceID })
            #expect(events.contains { $0["action"] as? String == "user.deleted" })
        }
    }

    @Test("oversized and malformed device bodies are refused")
    func malformedDeviceBodies() async throws {
        try await TestServer.routed { server in
            let (device, store) = server.authenticator()
            let enrollment = try await device.enroll(
                uri: try await server.enrollmentURI(for: try await server.createUser("heidi")), deviceName: "phone",
                platform: .linux)
            let signer = try await store.keys(for: enrollment.id).signer
            let cases: [(Data, Int, String)] = [
                (Data(#"{"name":""}"#.utf8), 400, "invalid_request"),
                (Data(#"{"name":"\#(String(repeating: "x", count: 65))"}"#.utf8), 400, "invalid_request"),
                (Data(#"{"nom":"x"}"#.utf8), 400, "invalid_request"),
                (Data(repeating: 0x41, count: 65 * 1024), 413, "payload_too_large"),
            ]
            for (body, status, error) in cases {
                let signature = try DeviceRequestSignature.sign(
                    method: "PATCH", url: server.base + "/device/v1/self", body: body, deviceID: enrollment.deviceID,
                    signer: signer, now: server.clock.now)
                let answer = try await server.call(
                    "PATCH", "/device/v1/self", body: body, headers: ["Authorization": signature.authorizationHeader])
                #expect(answer.status == status)
                #expect(answer.error == error)
            }
            #expect(try await device.deviceStatus(enrollment.id).name == "phone")
        }
    }
}
