import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

@Suite("Administration API")
struct AdminAPITests {
    @Test("calls without a valid key get 401 with a Bearer challenge")
    func authenticationIsRequired() async throws {
        try await TestServer.routed { server in
            let none = try await server.call("GET", "/admin/v1/tenants/default/users")
            #expect(none.status == 401)
            #expect(none.error == "invalid_token")
            #expect(none.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            let keyID = String(server.adminKey.prefix { $0 != "." })
            for wrong in ["nonsense", "\(keyID).wrongsecret", "key_unknown.secret", server.adminKey + "x"] {
                let answer = try await server.call("GET", "/admin/v1/tenants/default/users", key: wrong)
                #expect(answer.status == 401)
                #expect(answer.error == "invalid_token")
            }
        }
    }

    @Test("a key without the right gets 403 naming the right")
    func missingRightIsNamed() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin(
                "POST", "/admin/v1/tenants/default/admin-keys", json: ["name": "reader", "rights": ["users:read"]])
            #expect(created.status == 201)
            let reader = try #require(created["secret"] as? String)
            #expect(try await server.call("GET", "/admin/v1/tenants/default/users", key: reader).status == 200)
            let denied = try await server.call(
                "POST", "/admin/v1/tenants/default/users", key: reader, json: ["username": "mallory"])
            #expect(denied.status == 403)
            #expect(denied.error == "insufficient_rights")
            #expect(denied["missing_right"] as? String == "users:manage")
            let users = try await server.admin("GET", "/admin/v1/tenants/default/users")
            #expect((users["items"] as? [Any])?.isEmpty == true)
            // Nor may it mint a key with more rights than it has, or reach system endpoints.
            let escalation = try await server.call(
                "POST", "/admin/v1/tenants/default/admin-keys", key: reader, json: ["name": "x", "rights": ["users:manage"]])
            #expect(escalation.status == 403)
            let tenants = try await server.call("GET", "/admin/v1/tenants", key: reader)
            #expect(tenants.status == 403)
            #expect(tenants["missing_right"] as? String == "tenants:manage")
        }
    }

    @Test("a tenant key cannot reach another tenant, nor learn whether it exists")
    func tenantKeysStayInTheirTenant() async throws {
        try await TestServer.routed { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            let created = try await server.admin(
                "POST", "/admin/v1/tenants/acme/admin-keys", json: ["name": "acme-admin", "rights": ["users:read", "users:manage"]])
            let acmeKey = try #require(created["secret"] as? String)
            #expect(try await server.call("GET", "/admin/v1/tenants/acme/users", key: acmeKey).status == 200)
            for path in ["/admin/v1/tenants/default/users", "/admin/v1/tenants/nowhere/users"] {
                let answer = try await server.call("GET", path, key: acmeKey)
                #expect(answer.status == 403)
                #expect(answer.error == "insufficient_rights")
            }
            #expect(try await server.admin("GET", "/admin/v1/tenants/nowhere/users").status == 404)
        }
    }

    @Test("a revoked key stops working")
    func revokedKeyIsRefused() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", "/admin/v1/admin-keys", json: ["name": "ops", "rights": ["audit:read"]])
            let secret = try #require(created["secret"] as? String)
            let id = try #require((created["admin_key"] as? [String: Any])?["id"] as? String)
            #expect(try await server.call("GET", "/admin/v1/audit", key: secret).status == 200)
            #expect(try await server.admin("DELETE", "/admin/v1/admin-keys/\(id)").status == 204)
            #expect(try await server.call("GET", "/admin/v1/audit", key: secret).status == 401)
            #expect(try await server.admin("DELETE", "/admin/v1/admin-keys/\(id)").status == 409)
        }
    }

    @Test("a user's e-mail address is kept, changed and removed; a user made here is local")
    func userEmail() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin(
                "POST", "/admin/v1/tenants/default/users", json: ["username": "ada", "email": "ada@example.com"])
            #expect(created.status == 201)
            #expect(created["email"] as? String == "ada@example.com")
            #expect(created["source"] as? String == "local")
            #expect(created["source_id"] == nil && created["external_id"] == nil)
            let id = try #require(created["id"] as? String)
            let changed = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/users/\(id)", json: ["email": "ada.lovelace@example.com"])
            #expect(changed["email"] as? String == "ada.lovelace@example.com")
            let refused = try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(id)", json: ["email": "ada"])
            #expect(refused.status == 400)
            #expect(try await server.admin("GET", "/admin/v1/tenants/default/users/\(id)")["email"] as? String
                    == "ada.lovelace@example.com")
            let removed = try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(id)", json: ["email": ""])
            #expect(removed.status == 200)
            #expect(removed["email"] == nil)
        }
    }

    @Test("bad user input gets a precise 400 and creates nothing")
    func badUserInput() async throws {
        try await TestServer.routed { server in
            let cases: [([String: any Sendable], String)] = [
                ([:], "username"),
                (["username": 42], "username"),
                (["username": ""], "username"),
                (["username": "has space"], "username"),
                (["username": String(repeating: "u", count: 129)], "username"),
                (["username": "ok", "status": "banished"], "status"),
                (["username": "ok", "display_name": String(repeating: "d", count: 101)], "display_name"),
                (["username": "ok", "email": "no-at-sign"], "email"),
                (["username": "ok", "email": "two@@example.com"], "email"),
                (["username": "ok", "email": "ada@example..com"], "email"),
                (["username": "ok", "email": "ada @example.com"], "email"),
                (["username": "ok", "email": String(repeating: "a", count: 65) + "@example.com"], "email"),
            ]
            for (body, field) in cases {
                let answer = try await server.admin("POST", "/admin/v1/tenants/default/users", json: body)
                #expect(answer.status == 400, "\(body)")
                #expect(answer.error == "invalid_request")
                #expect(answer.errorDescription?.contains(field) == true, "\(answer.errorDescription ?? "")")
            }
            let notJSON = try await server.call("POST", "/admin/v1/tenants/default/users", key: server.adminKey, body: Data("{".utf8))
            #expect(notJSON.status == 400)
            let twice = try await server.call(
                "POST", "/admin/v1/tenants/default/users", key: server.adminKey,
                body: Data(#"{"username":"eve","username":"admin"}"#.utf8))
            #expect(twice.status == 400)
            #expect(twice.errorDescription == "the request body names a member more than once")
            let huge = try await server.call(
                "POST", "/admin/v1/tenants/default/users", key: server.adminKey, body: Data(repeating: 0x20, count: 100_000))
            #expect(huge.status == 413)
            #expect(huge.error == "payload_too_large")
            let users = try await server.admin("GET", "/admin/v1/tenants/default/users")
            #expect((users["items"] as? [Any])?.isEmpty == true)
            _ = try await server.createUser("ivan")
            let twin = try await server.admin("POST", "/admin/v1/tenants/default/users", json: ["username": "ivan"])
            #expect(twin.status == 409)
            #expect(twin.error == "conflict")
        }
    }

    @Test("clients: the secret is shown once, ping needs an https endpoint")
    func clients() async throws {
        try await TestServer.routed { server in
            let base = "/admin/v1/tenants/default/clients"
            let created = try await server.admin("POST", base, json: ["name": "Bank portal", "scopes": ["openid", "payments"]])
            #expect(created.status == 201)
            let secret = try #require(created["client_secret"] as? String)
            let client = try #require(created["client"] as? [String: Any])
            let id = try #require(client["client_id"] as? String)
            #expect(client["token_delivery_mode"] as? String == "poll")
            let fetched = try await server.admin("GET", "\(base)/\(id)")
            #expect(fetched.status == 200)
            #expect(!String(decoding: fetched.data, as: UTF8.self).contains(secret))
            let stored = try #require(try await SQLClientRepository().secretHash(id: id, on: server.database))
            #expect(Secrets.matches(secret, storedHash: stored))

            let badCases: [[String: any Sendable]] = [
                ["name": "x", "token_delivery_mode": "ping"],
                ["name": "x", "token_delivery_mode": "ping", "notification_endpoint": "http://rp.example.com/cb"],
                ["name": "x", "token_delivery_mode": "ping", "notification_endpoint": "https://rp.example.com/c b"],
                ["name": "x", "token_delivery_mode": "ping", "notification_endpoint": "https://rp.example.com/cb\t"],
                ["name": "x", "token_delivery_mode": "carrier-pigeon"],
                ["name": "x", "scopes": ["has space"]],
                ["name": "x", "scopes": [String]()],
            ]
            for body in badCases {
                let answer = try await server.admin("POST", base, json: body)
                #expect(answer.status == 400, "\(body)")
            }
            let ping = try await server.admin("POST", base, json: [
                "name": "dev", "token_delivery_mode": "ping", "notification_endpoint": "http://localhost:9000/cb"])
            #expect(ping.status == 201)

            let rotated = try await server.admin("POST", "\(base)/\(id)/secret")
            let newSecret = try #require(rotated["client_secret"] as? String)
            #expect(newSecret != secret)
            let updated = try await server.admin("PATCH", "\(base)/\(id)", json: ["name": "Bank portal v2"])
            #expect((updated["name"] as? String) == "Bank portal v2")
            #expect(try await server.admin("DELETE", "\(base)/\(id)").status == 204)
            #expect(try await server.admin("GET", "\(base)/\(id)").status == 404)
        }
    }

    @Test("every list pages with limit and cursor")
    func listsPage() async throws {
        try await TestServer.routed { server in
            for index in 0..<5 { _ = try await server.createUser("user\(index)") }
            var seen: [String] = []
            var cursor: String?
            repeat {
                let query = "?limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await server.admin("GET", "/admin/v1/tenants/default/users\(query)")
                let items = try #require(page["items"] as? [[String: Any]])
                #expect(items.count <= 2)
                seen += items.compactMap { $0["username"] as? String }
                cursor = page["next_cursor"] as? String
            } while cursor != nil
            #expect(seen == (0..<5).map { "user\($0)" })
            for bad in ["?limit=0", "?limit=201", "?limit=abc", "?cursor=%27%20OR%201=1"] {
                let answer = try await server.admin("GET", "/admin/v1/tenants/default/users\(bad)")
                #expect(answer.status == 400, "\(bad)")
            }
        }
    }

    @Test("tenants: created with their own device key, the default cannot be deleted")
    func tenants() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme Bank"])
            #expect(created.status == 201)
            #expect(created["issuer"] as? String == server.base + "/t/acme")
            let defaultTenant = try await server.admin("GET", "/admin/v1/tenants/default")
            #expect(created["device_key_thumbprint"] as? String != defaultTenant["device_key_thumbprint"] as? String)
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "x"]).status == 409)
            for slug in ["A", "1abc", "has space", "x", "trailing-"] {
                #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": slug, "display_name": "x"]).status == 400)
            }
            #expect(try await server.admin("DELETE", "/admin/v1/tenants/default").status == 409)
            #expect(try await server.admin("DELETE", "/admin/v1/tenants/acme").status == 204)
            #expect(try await server.admin("GET", "/admin/v1/tenants/acme").status == 404)
        }
    }

    @Test("an enrollment ticket comes with its URI and QR codes")
    func enrollmentTicket() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("judy")
            let answer = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
            #expect(answer.status == 201)
            #expect((answer["enrollment_uri"] as? String)?.hasPrefix("countersign://enroll?v=1&server=") == true)
            #expect((answer["qr_svg"] as? String)?.contains("<svg") == true)
            let pngText = try #require(answer["qr_png_base64"] as? String)
            let png = try #require(Data(base64Encoded: pngText))
            #expect(png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
            let ticket = try #require(answer["ticket"] as? [String: Any])
            #expect(ticket["user_id"] as? String == userID)
            // The secret is not stored and not shown again anywhere.
            let uri = try #require(answer["enrollment_uri"] as? String)
            let secret = try #require(URLComponents(string: uri)?.queryItems?.first { $0.name == "ticket" }?.value)
            let audit = try await server.admin("GET", "/admin/v1/audit?limit=200")
            #expect(!String(decoding: audit.data, as: UTF8.self).contains(secret))
            for lifetime in [0, 59, 86_401] {
                let bad = try await server.admin(
                    "POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets", json: ["lifetime_seconds": lifetime])
                #expect(bad.status == 400)
            }
            #expect(try await server.admin("POST", "/admin/v1/tenants/default/users/usr_nobody/enrollment-tickets").status == 404)
        }
    }

    @Test("a revoked ticket enrolls nothing; tickets are listed newest first")
    func revokedTicket() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("kim")
            let path = "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets"
            let first = try await server.admin("POST", path)
            let second = try await server.admin("POST", path)
            let secondID = try #require((second["ticket"] as? [String: Any])?["id"] as? String)
            #expect(try await server.admin("DELETE", "\(path)/\(secondID)").status == 204)
            #expect(try await server.admin("DELETE", "\(path)/\(secondID)").status == 409)
            #expect(try await server.admin("DELETE", "\(path)/tkt_unknown").status == 404)

            let (device, _) = server.authenticator()
            await #expect(throws: CountersignError.enrollmentRejected(
                code: "ticket_revoked", description: "the enrollment ticket was revoked; ask for a new one")) {
                try await device.enroll(uri: try #require(second["enrollment_uri"] as? String), deviceName: "x", platform: .linux)
            }
            _ = try await device.enroll(uri: try #require(first["enrollment_uri"] as? String), deviceName: "x", platform: .linux)

            let listed = try await server.admin("GET", path)
            let items = try #require(listed["items"] as? [[String: Any]])
            #expect(items.map { $0["id"] as? String } == [secondID, (first["ticket"] as? [String: Any])?["id"] as? String])
            #expect(items[0]["revoked_at"] is String)
            #expect(items[1]["used_at"] is String)
            #expect(items[1]["device_id"] is String)
        }
    }

    @Test("database URLs are read as libpq reads them")
    func postgresURLs() throws {
        let configuration = try PostgresDatabase.configuration(from: "postgres://us%40er:p%3Ass@db.example.com:6543/countersign?sslmode=disable")
        #expect(configuration.username == "us@er")
        #expect(configuration.password == "p:ss")
        #expect(configuration.database == "countersign")
        #expect(configuration.port == 6543)
        for bad in ["mysql://x@y/z", "postgres:///nohost", "not a url"] {
            #expect(throws: StorageError.self) { try PostgresDatabase.configuration(from: bad) }
        }
        #expect(throws: StorageError.self) { try PostgresDatabase.tlsMode([URLQueryItem(name: "sslmode", value: "sometimes")]) }
        for mode in ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] {
            _ = try PostgresDatabase.tlsMode([URLQueryItem(name: "sslmode", value: mode)])
        }
    }
}
