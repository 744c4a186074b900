import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The router driven in memory; setting, moving and rotating a webhook, and the upgrade that
/// grants the right, also run on PostgreSQL.
@Suite("Webhook administration: set, show, rotate, delete; URLs and rights")
struct WebhookAdminTests {
    static let base = "/admin/v1/tenants/default/webhooks"

    @Test("a new webhook answers 201 with its secret once; reading it never shows the secret")
    func secretIsShownOnce() async throws {
        try await TestServer.routed { server in
            let set = try await server.admin("PUT", Self.base + "/custom-verifier", json: ["url": "https://verify.example.com/cs"])
            #expect(set.status == 201, "\(set.errorDescription ?? "")")
            let secret = try #require(set["secret"] as? String)
            #expect(Data(base64URLEncoded: secret)?.count == 32)
            #expect(set["purpose"] as? String == "custom-verifier")
            #expect(set["url"] as? String == "https://verify.example.com/cs")
            #expect(set["created_at"] is String && set["updated_at"] is String)

            let shown = try await server.admin("GET", Self.base + "/custom-verifier")
            #expect(shown.status == 200)
            #expect(shown["secret"] == nil)
            #expect(shown["url"] as? String == "https://verify.example.com/cs")
            let list = try await server.admin("GET", Self.base)
            #expect((list["items"] as? [[String: any Sendable]])?.map { $0["purpose"] as? String } == ["custom-verifier"])
            for answer in [shown, list] {
                #expect(!String(decoding: answer.data, as: UTF8.self).contains(secret))
            }
        }
    }

    @Test("the secret is stored sealed, bound to the tenant and purpose")
    func secretIsSealed() async throws {
        try await TestServer.routed { server in
            let secret = try await server.setWebhook(.events, url: "https://events.example.com/cs")
            let row = try #require(try await server.database.run(
                "SELECT secret_sealed FROM tenant_webhooks WHERE purpose = \("events")").first)
            let sealed = try row.data("secret_sealed")
            #expect(sealed.range(of: Data(secret.utf8)) == nil)
            #expect(try await SQLWebhookTargets(database: server.database, webhooks: SQLTenantWebhookRepository(), sealer: server.sealer)
                .target(tenantID: server.defaultTenantID, purpose: .events)?.secret == secret)
            #expect(throws: SealingError.self) {
                try server.sealer.open(sealed, context: TenantWebhook.sealingContext(
                    tenantID: server.defaultTenantID, purpose: .customVerifier))
            }
        }
    }

    @Test("setting the URL again keeps the secret; rotate_secret makes and shows a new one", arguments: Engine.available)
    func rotation(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let first = try await server.setWebhook(.events, url: "https://events.example.com/a")
            let moved = try await server.admin("PUT", Self.base + "/events", json: ["url": "https://events.example.com/b"])
            #expect(moved.status == 200)
            #expect(moved["secret"] == nil)
            #expect(moved["url"] as? String == "https://events.example.com/b")
            let load = { try await SQLWebhookTargets(database: server.database, webhooks: SQLTenantWebhookRepository(), sealer: server.sealer)
                .target(tenantID: server.defaultTenantID, purpose: .events) }
            #expect(try await load()?.secret == first)
            #expect(try await load()?.url == "https://events.example.com/b")

            let rotated = try await server.admin(
                "PUT", Self.base + "/events", json: ["url": "https://events.example.com/b", "rotate_secret": true])
            #expect(rotated.status == 200)
            let second = try #require(rotated["secret"] as? String)
            #expect(second != first)
            #expect(try await load()?.secret == second)
        }
    }

    @Test("deleting answers 204, then the webhook is gone")
    func deletion() async throws {
        try await TestServer.routed { server in
            _ = try await server.setWebhook(.customVerifier, url: "https://verify.example.com/cs")
            #expect(try await server.admin("DELETE", Self.base + "/custom-verifier").status == 204)
            let gone = try await server.admin("GET", Self.base + "/custom-verifier")
            #expect(gone.status == 404)
            #expect(gone.errorDescription == "custom-verifier webhook was not found")
            #expect(try await server.admin("DELETE", Self.base + "/custom-verifier").status == 404)
        }
    }

    @Test("every change is audited with the host, never the secret")
    func changesAreAudited() async throws {
        try await TestServer.routed { server in
            let secret = try await server.setWebhook(.events, url: "https://events.example.com/cs?token=abc")
            _ = try await server.admin(
                "PUT", Self.base + "/events", json: ["url": "https://events.example.com/cs", "rotate_secret": true])
            _ = try await server.admin("DELETE", Self.base + "/events")
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit")
            let events = (audit["items"] as? [[String: any Sendable]] ?? [])
                .filter { ($0["action"] as? String)?.hasPrefix("webhook.") == true }
            let details = events.map { $0["details"] as? [String: any Sendable] ?? [:] }
            #expect(events.map { $0["action"] as? String } == ["webhook.deleted", "webhook.set", "webhook.set"])
            #expect(details.map { $0["secret"] as? String } == [nil, "rotated", "created"])
            #expect(details.allSatisfy { $0["host"] as? String == "events.example.com" })
            #expect(events.allSatisfy { $0["target_type"] as? String == "webhook" && $0["target_id"] as? String == "events" })
            let text = String(decoding: audit.data, as: UTF8.self)
            #expect(!text.contains(secret) && !text.contains("token=abc"))
        }
    }

    @Test("a URL that breaks a rule is refused with the rule it breaks", arguments: [
        ("http://hooks.example.com/cs", "must use https (http is allowed only to 127.0.0.1, ::1 or localhost)"),
        ("ftp://hooks.example.com/cs", "must use https (http is allowed only to 127.0.0.1, ::1 or localhost)"),
        ("http://10.0.0.1/cs", "must use https (http is allowed only to 127.0.0.1, ::1 or localhost)"),
        ("https://user:password@hooks.example.com/cs", "must not contain a user name or password"),
        ("http://user@localhost/cs", "must not contain a user name or password"),
        ("https://hooks.example.com/cs#part", "must not contain a fragment (#…)"),
        ("hooks.example.com/cs", "must be an absolute URL, e.g. https://hooks.example.com/countersign"),
        ("https://hooks.example.com/a b", "must be an absolute URL, e.g. https://hooks.example.com/countersign"),
        ("https:///cs", "must name a host"),
        // Found by schemathesis: a host that is not ASCII was stored, and answered back as a
        // URL the document's `format: uri` refuses.
        ("htTps://\u{23E}", "must be written in ASCII: percent-encode other characters, and write an international domain name in its xn-- form"),
        ("https://hooks.example.com/é", "must be written in ASCII: percent-encode other characters, and write an international domain name in its xn-- form"),
        ("https://hooks.example.com/" + String(repeating: "a", count: 2030), "must be at most 2048 characters"),
    ])
    func badURLsAreRefused(url: String, rule: String) async throws {
        try await TestServer.routed { server in
            let answer = try await server.admin("PUT", Self.base + "/events", json: ["url": url])
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.errorDescription == "field url is invalid: \(rule)")
            #expect(try await server.admin("GET", Self.base + "/events").status == 404)
        }
    }

    @Test("https anywhere, and http to the loopback host, are taken", arguments: [
        "https://hooks.example.com/cs?tenant=acme", "http://127.0.0.1:9000/cs", "http://[::1]:9000/cs", "http://localhost/cs",
        "HTTPS://hooks.example.com:8443/cs",
    ])
    func goodURLsAreTaken(url: String) async throws {
        try await TestServer.routed { server in
            let answer = try await server.admin("PUT", Self.base + "/events", json: ["url": url])
            #expect(answer.status == 201, "\(url): \(answer.errorDescription ?? "")")
        }
    }

    @Test("a body without url, and an unknown purpose, are refused")
    func missingURLAndUnknownPurpose() async throws {
        try await TestServer.routed { server in
            let missing = try await server.admin("PUT", Self.base + "/events", json: ["rotate_secret": true])
            #expect(missing.status == 400)
            #expect(missing.errorDescription == "field url is required")
            for method in ["PUT", "GET", "DELETE"] {
                let unknown = try await server.admin(
                    method, Self.base + "/audit-log", json: method == "PUT" ? ["url": "https://x.example"] : nil)
                #expect(unknown.status == 404, "\(method)")
                #expect(unknown.errorDescription == "webhook purpose audit-log was not found", "\(method)")
            }
        }
    }

    @Test("a key without webhooks:manage gets 403 on every webhook call")
    func rightIsRequired() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin(
                "POST", "/admin/v1/tenants/default/admin-keys", json: ["name": "ops", "rights": ["users:read", "audit:read"]])
            let key = try #require(created["secret"] as? String, "\(created.errorDescription ?? "")")
            let calls: [(String, String, [String: any Sendable]?)] = [
                ("GET", Self.base, nil),
                ("PUT", Self.base + "/events", ["url": "https://events.example.com/cs"]),
                ("GET", Self.base + "/events", nil),
                ("DELETE", Self.base + "/events", nil),
                ("GET", Self.base + "/events/deliveries", nil),
            ]
            for (method, path, json) in calls {
                let answer = try await server.call(method, path, key: key, json: json)
                #expect(answer.status == 403, "\(method) \(path)")
                #expect(answer["missing_right"] as? String == "webhooks:manage", "\(method) \(path)")
            }
        }
    }

    @Test("the upgrade gives webhooks:manage to system keys that manage tenants", arguments: Engine.available)
    func upgradeGrantsTheRight(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let database = server.database
            // The database as an installation from before webhooks left it.
            try await database.run("UPDATE admin_keys SET rights = 'audit:read tenants:manage' WHERE tenant_id IS NULL")
            try await database.run("DELETE FROM schema_migrations WHERE version = 5")
            try await database.run("DROP INDEX webhook_outbox_tenant")
            try await Migrations.migrate(database)
            let rows = try await database.run("SELECT rights FROM admin_keys WHERE tenant_id IS NULL")
            #expect(try rows.map { try $0.string("rights") } == ["audit:read tenants:manage webhooks:manage"])
            #expect(try await server.admin("GET", Self.base).status == 200)
        }
    }
}
