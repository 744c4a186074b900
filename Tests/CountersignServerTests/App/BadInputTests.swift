import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The endpoints not covered by their own suites, each with missing and malformed fields: every
/// bad request gets 400 `invalid_request` naming the field, and nothing changes.
@Suite("Bad input")
struct BadInputTests {
    @Test("admin key creation")
    func adminKeyCreation() async throws {
        try await TestServer.routed { server in
            let path = "/admin/v1/tenants/default/admin-keys"
            let cases: [([String: any Sendable], String)] = [
                ([:], "name"),
                (["name": "x"], "rights"),
                (["name": "x", "rights": [String]()], "rights"),
                (["name": "x", "rights": ["users:fly"]], "rights"),
                (["name": "x", "rights": "users:read"], "rights"),
                (["name": "", "rights": ["users:read"]], "name"),
                (["name": "x", "rights": ["tenants:manage"]], "rights"),
            ]
            for (body, field) in cases {
                let answer = try await server.admin("POST", path, json: body)
                #expect(answer.status == 400, "\(body)")
                #expect(answer.error == "invalid_request")
                #expect(answer.errorDescription?.contains(field) == true, "\(answer.errorDescription ?? "")")
            }
            let keys = try await server.admin("GET", path)
            #expect((keys["items"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("tenant, client and user updates")
    func updates() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("mia")
            let created = try await server.admin("POST", "/admin/v1/tenants/default/clients", json: ["name": "rp"])
            let clientID = try #require((created["client"] as? [String: Any])?["client_id"] as? String)
            let cases: [(String, [String: any Sendable], String)] = [
                ("/admin/v1/tenants/default", ["display_name": ""], "display_name"),
                ("/admin/v1/tenants/default", ["display_name": 7], "display_name"),
                ("/admin/v1/tenants/default/clients/\(clientID)", ["scopes": ["bad scope"]], "scopes"),
                ("/admin/v1/tenants/default/clients/\(clientID)", ["token_delivery_mode": "push"], "notification_endpoint"),
                ("/admin/v1/tenants/default/clients/\(clientID)", ["notification_endpoint": "ftp://x"], "notification_endpoint"),
                ("/admin/v1/tenants/default/users/\(userID)", ["status": "frozen"], "status"),
                ("/admin/v1/tenants/default/users/\(userID)", ["username": "two words"], "username"),
            ]
            for (path, body, field) in cases {
                let answer = try await server.admin("PATCH", path, json: body)
                #expect(answer.status == 400, "\(path) \(body)")
                #expect(answer.errorDescription?.contains(field) == true, "\(answer.errorDescription ?? "")")
            }
            #expect(try await server.admin("GET", "/admin/v1/tenants/default")["display_name"] as? String == "Default")
            let client = try await server.admin("GET", "/admin/v1/tenants/default/clients/\(clientID)")
            #expect(client["token_delivery_mode"] as? String == "poll")
            #expect(client["scopes"] as? [String] == ["openid"])
            let user = try await server.admin("GET", "/admin/v1/tenants/default/users/\(userID)")
            #expect(user["status"] as? String == "active")
            #expect(user["username"] as? String == "mia")
            #expect(try await server.admin("PATCH", "/admin/v1/tenants/default/users/usr_nobody", json: ["status": "active"]).status == 404)
        }
    }

    @Test("push token registration")
    func pushToken() async throws {
        try await TestServer.routed { server in
            let (device, store) = server.authenticator()
            let enrollment = try await device.enroll(
                uri: try await server.enrollmentURI(for: try await server.createUser("noah")), deviceName: "phone",
                platform: .ios, push: PushRegistration(provider: .apns, token: "original-token"))
            let signer = try await store.keys(for: enrollment.id).signer
            let cases: [(String, String)] = [
                (#"{"provider":"apns","token":""}"#, "token"),
                (#"{"provider":"pigeon","token":"abc"}"#, "provider"),
                (#"{"token":"abc"}"#, "provider"),
                (#"{"provider":"fcm"}"#, "token"),
                (#"{"provider":"fcm","token":"\#(String(repeating: "t", count: 4097))"}"#, "token"),
            ]
            for (text, field) in cases {
                let body = Data(text.utf8)
                let signature = try DeviceRequestSignature.sign(
                    method: "PUT", url: server.base + "/device/v1/self/push-token", body: body,
                    deviceID: enrollment.deviceID, signer: signer, now: server.clock.now)
                let answer = try await server.call(
                    "PUT", "/device/v1/self/push-token", body: body, headers: ["Authorization": signature.authorizationHeader])
                #expect(answer.status == 400, "\(text.prefix(60))")
                #expect(answer.error == "invalid_request")
                #expect(answer.errorDescription?.contains(field) == true, "\(answer.errorDescription ?? "")")
            }
            let status = try await device.deviceStatus(enrollment.id)
            #expect(status.push == .init(provider: .apns, tokenSuffix: "al-token", valid: true))
        }
    }
}
