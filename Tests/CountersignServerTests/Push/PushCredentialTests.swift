import CountersignCore
import CountersignPushEmulator
import Foundation
import Testing
@testable import CountersignServer

/// The router is driven in memory; a certificate stored sealed is also read back from PostgreSQL.
@Suite("Push credentials: set, show, delete; refused when they could not send")
struct PushCredentialTests {
    static let base = "/admin/v1/tenants/default/push-credentials"

    static func certificateFields(_ p12: Data, password: String = "s3cret", topic: String = "com.example.bank")
        -> [String: any Sendable] {
        ["certificate": p12.base64EncodedString(), "password": password, "topic": topic, "environment": "sandbox"]
    }

    @Test("an APNs certificate is checked, sealed, and shown by subject and expiry only",
          .enabled(if: PushTestPKI.available), arguments: Engine.available)
    func certificateIsShownWithoutSecrets(engine: Engine) async throws {
        let pki = try #require(PushTestPKI.shared)
        let p12 = try pki.clientPKCS12(commonName: "Apple Push Services: com.example.bank", topic: "com.example.bank",
                                       password: "s3cret")
        try await TestServer.with(engine) { server in
            let set = try await server.admin("PUT", Self.base + "/apns-certificates/bank-ios", json: Self.certificateFields(p12))
            #expect(set.status == 200, "\(set.errorDescription ?? "")")
            let summary = try #require(set["summary"] as? [String: any Sendable])
            #expect((summary["certificate_subject"] as? String)?.contains("Apple Push Services: com.example.bank") == true)
            #expect(summary["certificate_not_after"] is String)
            #expect(set["client_app_key"] as? String == "bank-ios")
            #expect(set["environment"] as? String == "sandbox")
            #expect(set["active"] as? Bool == true)

            let list = try await server.admin("GET", Self.base)
            let text = String(decoding: list.data, as: UTF8.self)
            #expect(list.status == 200)
            #expect(!text.contains("s3cret"))
            #expect(!text.contains(String(p12.base64EncodedString().prefix(40))))
            let row = try #require(try await server.database.run(
                "SELECT sealed_secret FROM push_credentials WHERE client_app_key = \("bank-ios")").first)
            let sealed = try row.data("sealed_secret")
            #expect(sealed.range(of: Data("s3cret".utf8)) == nil, "the password is stored sealed")
        }
    }

    @Test("a certificate that cannot send is refused with its cause, and nothing is stored",
          .enabled(if: PushTestPKI.available),
          arguments: [
            ("wrong password", "password", "does not open"),
            ("not a PKCS#12 file", "certificate", "is not a PKCS#12"),
            ("expired", "certificate", "expired on"),
            ("no private key", "certificate", "no private key"),
          ])
    func badCertificatesAreRefused(defect: String, field: String, message: String) async throws {
        let pki = try #require(PushTestPKI.shared)
        let fields: [String: any Sendable] = switch defect {
        case "wrong password":
            Self.certificateFields(try pki.clientPKCS12(commonName: "c", topic: nil, password: "right"), password: "wrong")
        case "not a PKCS#12 file":
            Self.certificateFields(Data("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8))
        case "expired":
            Self.certificateFields(try pki.clientPKCS12(commonName: "c", topic: nil, password: "s3cret", expired: true))
        default:
            Self.certificateFields(try pki.clientPKCS12(commonName: "c", topic: nil, password: "s3cret", includeKey: false))
        }
        try await TestServer.routed { server in
            let answer = try await server.admin("PUT", Self.base + "/apns-certificates/bank-ios", json: fields)
            #expect(answer.status == 400, "\(defect)")
            #expect(answer.error == "invalid_request")
            let description = answer.errorDescription ?? ""
            #expect(description.contains("field \(field)") && description.contains(message), "\(defect): \(description)")
            let list = try await server.admin("GET", Self.base)
            #expect((list["items"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("a key without push-credentials:manage gets 403 on every push-credential call")
    func rightIsRequired() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin(
                "POST", "/admin/v1/tenants/default/admin-keys", json: ["name": "ops", "rights": ["users:read"]])
            let key = try #require(created["secret"] as? String, "\(created.errorDescription ?? "")")
            let calls: [(String, String, [String: any Sendable]?)] = [
                ("GET", Self.base, nil),
                ("PUT", Self.base + "/apns-token", APNsTestKey().fields()),
                ("DELETE", Self.base + "/fcm", nil),
                ("POST", "/Mobile/SetApnsCertForClientApp", ["ClientAppKey": "k"]),
                ("POST", "/Mobile/DeleteApnsCertForClientApp", ["ClientAppKey": "k"]),
            ]
            for (method, path, json) in calls {
                let answer = try await server.call(method, path, key: key, json: json)
                #expect(answer.status == 403, "\(method) \(path)")
                if path.hasPrefix("/Mobile") {
                    #expect(answer["success"] as? Bool == false)
                    #expect((answer["Message"] as? String)?.contains("push-credentials:manage") == true)
                } else {
                    #expect(answer["missing_right"] as? String == "push-credentials:manage", "\(method) \(path)")
                }
            }
        }
    }

    @Test("a .p8 key is taken with its key id and team id; bad ones are refused")
    func tokenCredential() async throws {
        try await TestServer.routed { server in
            let key = APNsTestKey()
            var fields = key.fields()
            fields["key_id"] = "short"
            #expect(try await server.admin("PUT", Self.base + "/apns-token", json: fields).errorDescription?
                .contains("field key_id") == true)
            fields = key.fields()
            fields["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"
            #expect(try await server.admin("PUT", Self.base + "/apns-token", json: fields).errorDescription?
                .contains("field private_key") == true)
            fields = key.fields()
            fields["topic"] = nil
            #expect(try await server.admin("PUT", Self.base + "/apns-token", json: fields).errorDescription?
                .contains("field topic is required") == true)

            let set = try await server.admin("PUT", Self.base + "/apns-token", json: key.fields())
            #expect(set.status == 200, "\(set.errorDescription ?? "")")
            let summary = try #require(set["summary"] as? [String: any Sendable])
            #expect(summary["key_id"] as? String == key.keyID)
            #expect(summary["team_id"] as? String == key.teamID)
            #expect(!String(decoding: set.data, as: UTF8.self).contains("PRIVATE KEY"))

            #expect(try await server.admin("DELETE", Self.base + "/apns-token").status == 204)
            #expect(try await server.admin("DELETE", Self.base + "/apns-token").status == 404)
        }
    }

    @Test("an FCM service account is taken as a string or an object; a bad one is refused")
    func fcmCredential() async throws {
        let account = try FCMEmulator.ServiceAccount.make(
            projectID: "bank-app-1", clientEmail: "push@bank-app-1.iam.gserviceaccount.com",
            tokenURI: "https://oauth2.googleapis.com/token")
        try await TestServer.routed { server in
            let set = try await server.admin("PUT", Self.base + "/fcm", json: ["service_account": account.json])
            #expect(set.status == 200, "\(set.errorDescription ?? "")")
            let summary = try #require(set["summary"] as? [String: any Sendable])
            #expect(summary["project_id"] as? String == "bank-app-1")
            #expect(summary["client_email"] as? String == account.clientEmail)

            let object = try #require(try JSONSerialization.jsonObject(with: Data(account.json.utf8)) as? [String: any Sendable])
            #expect(try await server.admin("PUT", Self.base + "/fcm", json: ["service_account": object]).status == 200)

            var broken = object
            broken["private_key"] = "not a key"
            let refused = try await server.admin("PUT", Self.base + "/fcm", json: ["service_account": broken])
            #expect(refused.status == 400)
            #expect(refused.errorDescription?.contains("private_key") == true)
            #expect(try await server.admin("PUT", Self.base + "/fcm", json: ["service_account": "{}"]).status == 400)
        }
    }

    @Test("CyberArk's SetApnsCertForClientApp and DeleteApnsCertForClientApp; the newest client app key sends",
          .enabled(if: PushTestPKI.available))
    func cyberArkCalls() async throws {
        let pki = try #require(PushTestPKI.shared)
        let first = try pki.clientPKCS12(commonName: "first", topic: "com.example.bank", password: "one")
        let second = try pki.clientPKCS12(commonName: "second", topic: "com.example.bank", password: "two")
        try await TestServer.routed { server in
            for (appKey, p12, password) in [("app-1", first, "one"), ("app-2", second, "two")] {
                let set = try await server.call("POST", "/Mobile/SetApnsCertForClientApp", key: server.adminKey, json: [
                    "ClientAppKey": appKey, "APNSCert": p12.base64EncodedString(), "APNSPass": password,
                    "APNSTopic": "com.example.bank"])
                #expect(set.status == 200)
                #expect(set["success"] as? Bool == true, "\(set["Message"] ?? "")")
                server.clock.advance(by: 1)
            }
            let list = try await server.admin("GET", Self.base)
            let items = try #require(list["items"] as? [[String: any Sendable]])
            let active = items.filter { $0["active"] as? Bool == true }.compactMap { $0["client_app_key"] as? String }
            #expect(active == ["app-2"])

            let wrong = try await server.call("POST", "/Mobile/SetApnsCertForClientApp", key: server.adminKey, json: [
                "ClientAppKey": "app-3", "APNSCert": first.base64EncodedString(), "APNSPass": "nope",
                "APNSTopic": "com.example.bank"])
            #expect(wrong.status == 400)
            #expect(wrong["success"] as? Bool == false)
            #expect((wrong["Message"] as? String)?.contains("field APNSPass") == true)

            let deleted = try await server.call(
                "POST", "/Mobile/DeleteApnsCertForClientApp", key: server.adminKey, json: ["ClientAppKey": "app-2"])
            #expect(deleted["success"] as? Bool == true)
            let after = try #require(try await server.admin("GET", Self.base)["items"] as? [[String: any Sendable]])
            #expect(after.compactMap { $0["client_app_key"] as? String } == ["app-1"])
            #expect(after.first?["active"] as? Bool == true)
            let again = try await server.call(
                "POST", "/Mobile/DeleteApnsCertForClientApp", key: server.adminKey, json: ["ClientAppKey": "app-2"])
            #expect(again.status == 404)
            #expect(again["success"] as? Bool == false)
        }
    }
}
