import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// `/admin/v1/tenants/{tenant}/trusted-issuers`: creating, reading, changing and deleting the
/// identity providers a tenant trusts, the rule each field is held to, the limits, the right,
/// the audit, and the command line.
@Suite("Trusted issuer administration")
struct TrustedIssuerAdminTests {
    static let base = "/admin/v1/tenants/default/trusted-issuers"
    static let bank: [String: any Sendable] = [
        "issuer": "https://login.bank.example", "jwks_uri": "https://login.bank.example/oauth2/jwks", "audience": "bank-app",
    ]
    static let key = ClientSigningKey.es256(kid: "bank-1")

    @Test("create, show, list, change and delete; the defaults of username_claim and required_scope", arguments: Engine.available)
    func lifecycle(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let created = try await server.admin("POST", Self.base, json: Self.bank)
            #expect(created.status == 201, "\(created.errorDescription ?? "")")
            let id = try #require(created["id"] as? String)
            #expect(id.hasPrefix("tis_"))
            #expect(created["issuer"] as? String == "https://login.bank.example")
            #expect(created["jwks_uri"] as? String == "https://login.bank.example/oauth2/jwks")
            #expect(created["jwks"] == nil)
            #expect(created["audience"] as? String == "bank-app")
            #expect(created["username_claim"] as? String == "preferred_username")
            #expect(created["required_scope"] as? String == "countersign:enroll")
            #expect(created["created_at"] is String && created["updated_at"] is String)

            let shown = try await server.admin("GET", Self.base + "/\(id)")
            #expect(shown.status == 200)
            #expect(shown.data == created.data)
            let list = try await server.admin("GET", Self.base)
            #expect((list["items"] as? [[String: any Sendable]])?.map { $0["id"] as? String } == [id])
            #expect(list.json?["next_cursor"] is NSNull)

            server.clock.advance(by: 5)
            let changed = try await server.admin("PATCH", Self.base + "/\(id)", json: [
                "jwks": ["keys": [Self.key.publicJWK]], "audience": "bank-mobile", "username_claim": "email",
                "required_scope": "",
            ])
            #expect(changed.status == 200, "\(changed.errorDescription ?? "")")
            #expect(changed["jwks_uri"] == nil)
            let keys = try #require((changed["jwks"] as? [String: any Sendable])?["keys"] as? [[String: any Sendable]])
            #expect(keys.map { $0["kid"] as? String } == ["bank-1"])
            #expect(changed["audience"] as? String == "bank-mobile")
            #expect(changed["username_claim"] as? String == "email")
            #expect(changed["required_scope"] as? String == "")
            #expect(changed["created_at"] as? String == created["created_at"] as? String)
            #expect(changed["updated_at"] as? String != created["updated_at"] as? String)
            #expect(try await server.admin("GET", Self.base + "/\(id)").data == changed.data)

            let back = try await server.admin("PATCH", Self.base + "/\(id)", json: ["jwks_uri": "https://login.bank.example/v2/jwks"])
            #expect(back["jwks_uri"] as? String == "https://login.bank.example/v2/jwks")
            #expect(back["jwks"] == nil)

            #expect(try await server.admin("DELETE", Self.base + "/\(id)").status == 204)
            let gone = try await server.admin("GET", Self.base + "/\(id)")
            #expect(gone.status == 404)
            #expect(gone.errorDescription == "trusted issuer \(id) was not found")
            #expect(try await server.admin("DELETE", Self.base + "/\(id)").status == 404)
            #expect(try await server.admin("PATCH", Self.base + "/\(id)", json: ["audience": "x"]).status == 404)
        }
    }

    /// A body over `bank`: a member set to `NSNull()` is sent as `null`, one named in `removing`
    /// is left out.
    static func body(_ changes: [String: any Sendable], removing: [String] = []) -> [String: any Sendable] {
        var body = bank
        body.merge(changes) { $1 }
        for name in removing { body[name] = nil }
        return body
    }

    static let badBodies: [(String, [String: any Sendable], String)] = [
        ("no issuer", body([:], removing: ["issuer"]), "field issuer is required"),
        ("no audience", body([:], removing: ["audience"]), "field audience is required"),
        ("no keys", body([:], removing: ["jwks_uri"]), "field jwks_uri or jwks is required"),
        ("both key sources", body(["jwks": ["keys": [key.publicJWK]]]), "field jwks is invalid: give jwks_uri or jwks, not both"),
        ("issuer over http", body(["issuer": "http://login.bank.example"]),
         "field issuer is invalid: must use https (http is allowed only to 127.0.0.1)"),
        ("issuer over http to localhost", body(["issuer": "http://localhost:9000"]),
         "field issuer is invalid: must use https (http is allowed only to 127.0.0.1)"),
        ("issuer not a URL", body(["issuer": "login.bank.example"]),
         "field issuer is invalid: must be an absolute URL, e.g. https://login.bank.example"),
        ("issuer with a space", body(["issuer": "https://login.bank.example/a b"]),
         "field issuer is invalid: must be an absolute URL, e.g. https://login.bank.example"),
        ("issuer without host", body(["issuer": "https:///realms/bank"]), "field issuer is invalid: must name a host"),
        ("issuer with credentials", body(["issuer": "https://user:secret@login.bank.example"]),
         "field issuer is invalid: must not contain a user name or password"),
        ("issuer with a query", body(["issuer": "https://login.bank.example?tenant=1"]),
         "field issuer is invalid: must not contain a query (?…)"),
        ("issuer with a fragment", body(["issuer": "https://login.bank.example#x"]),
         "field issuer is invalid: must not contain a fragment (#…)"),
        ("issuer too long", body(["issuer": "https://login.bank.example/" + String(repeating: "a", count: 2030)]),
         "field issuer is invalid: must be at most 2048 characters"),
        ("the tenant's own issuer", body(["issuer": TestServer.routedBase]),
         "field issuer is invalid: is this tenant's own issuer, whose tokens are accepted already"),
        ("the tenant's own issuer with a slash", body(["issuer": TestServer.routedBase + "/"]),
         "field issuer is invalid: is this tenant's own issuer, whose tokens are accepted already"),
        ("the tenant's own issuer below /t", body(["issuer": TestServer.routedBase + "/t/default"]),
         "field issuer is invalid: is this tenant's own issuer, whose tokens are accepted already"),
        ("jwks_uri over http", body(["jwks_uri": "http://login.bank.example/jwks"]),
         "field jwks_uri is invalid: must use https (http is allowed only to 127.0.0.1)"),
        ("jwks_uri with a fragment", body(["jwks_uri": "https://login.bank.example/jwks#keys"]),
         "field jwks_uri is invalid: must not contain a fragment (#…)"),
        ("an empty key set", body(["jwks": ["keys": [String]()]], removing: ["jwks_uri"]),
         "field jwks is invalid: must hold 1 to 10 keys"),
        ("a private key", body(["jwks": ["keys": [key.publicJWK.merging(["d": "AAAA"]) { $1 }]]], removing: ["jwks_uri"]),
         "field jwks is invalid: key bank-1 holds the private member d; register only the public key, and replace this key pair: it is exposed"),
        ("a key set that is no set", body(["jwks": ["kty": "EC"]], removing: ["jwks_uri"]),
         "field jwks is invalid: must be a JSON Web Key Set: an object with a keys array"),
        ("an empty audience", body(["audience": ""]), "field audience is invalid: 1 to 1024 characters without control characters"),
        ("an audience with a control character", body(["audience": "bank\u{7}app"]),
         "field audience is invalid: 1 to 1024 characters without control characters"),
        ("a numeric audience", body(["audience": 42]), "field audience has the wrong type"),
        ("a username claim with a space", body(["username_claim": "user name"]),
         "field username_claim is invalid: 1 to 256 printable ASCII characters without spaces"),
        ("an empty username claim", body(["username_claim": ""]),
         "field username_claim is invalid: 1 to 256 printable ASCII characters without spaces"),
        ("a username claim that names no user", body(["username_claim": "aud"]),
         "field username_claim is invalid: aud does not name a user; use preferred_username, email, sub or the like"),
        ("two scopes", body(["required_scope": "openid countersign:enroll"]),
         "field required_scope is invalid: must be one scope token (RFC 6749 §3.3), or empty for no scope check"),
        ("a null scope", body(["required_scope": NSNull()]), "field required_scope must not be null"),
        ("a null jwks_uri", body(["jwks_uri": NSNull()]), "field jwks_uri must not be null"),
    ]

    @Test("a field that breaks its rule is refused with that rule, and nothing is stored", arguments: badBodies)
    func badFieldsAreRefused(_ what: String, body: [String: any Sendable], rule: String) async throws {
        try await TestServer.routed { server in
            let answer = try await server.admin("POST", Self.base, json: body)
            #expect(answer.status == 400, "\(what)")
            #expect(answer.error == "invalid_request", "\(what)")
            #expect(answer.errorDescription == rule, "\(what)")
            #expect((try await server.admin("GET", Self.base)["items"] as? [[String: any Sendable]])?.isEmpty == true, "\(what)")
        }
    }

    @Test("a change is held to the same rules, and a refused one changes nothing")
    func badChangesAreRefused() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", Self.base, json: Self.bank)
            let id = try #require(created["id"] as? String)
            for (change, rule) in [
                (["issuer": "http://login.bank.example"] as [String: any Sendable],
                 "field issuer is invalid: must use https (http is allowed only to 127.0.0.1)"),
                (["jwks_uri": "https://a.example/jwks", "jwks": ["keys": [Self.key.publicJWK]]],
                 "field jwks is invalid: give jwks_uri or jwks, not both"),
                (["username_claim": "exp"], "field username_claim is invalid: exp does not name a user; use preferred_username, email, sub or the like"),
                (["audience": NSNull()], "field audience must not be null"),
            ] {
                let answer = try await server.admin("PATCH", Self.base + "/\(id)", json: change)
                #expect(answer.status == 400)
                #expect(answer.errorDescription == rule)
            }
            #expect(try await server.admin("GET", Self.base + "/\(id)").data == created.data)
        }
    }

    @Test("an issuer is trusted once per tenant, by create or change, and at most 10 are", arguments: Engine.available)
    func uniquenessAndLimit(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let first = try await server.admin("POST", Self.base, json: Self.bank)
            let firstID = try #require(first["id"] as? String)
            let again = try await server.admin("POST", Self.base, json: Self.body(["audience": "other-app"]))
            #expect(again.status == 409)
            #expect(again.errorDescription == "the tenant already trusts the issuer https://login.bank.example (\(firstID))")

            var ids = [firstID]
            for index in 2...10 {
                let created = try await server.admin(
                    "POST", Self.base, json: Self.body(["issuer": "https://idp\(index).bank.example"]))
                #expect(created.status == 201, "\(index): \(created.errorDescription ?? "")")
                ids.append(try #require(created["id"] as? String))
            }
            let eleventh = try await server.admin("POST", Self.base, json: Self.body(["issuer": "https://idp11.bank.example"]))
            #expect(eleventh.status == 409)
            #expect(eleventh.errorDescription == "the tenant trusts 10 issuers already, the most it may; delete one first")
            let list = try await server.admin("GET", Self.base)
            #expect((list["items"] as? [[String: any Sendable]])?.map { $0["id"] as? String } == ids)

            let renamed = try await server.admin("PATCH", Self.base + "/\(ids[1])", json: ["issuer": "https://login.bank.example"])
            #expect(renamed.status == 409)
            #expect(renamed.errorDescription == "the tenant already trusts the issuer https://login.bank.example (\(firstID))")
            // Naming its own issuer again is no conflict.
            #expect(try await server.admin("PATCH", Self.base + "/\(firstID)", json: ["issuer": "https://login.bank.example"]).status == 200)

            // Another tenant trusts the same issuer on its own count.
            _ = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "branch", "display_name": "Branch"])
            let elsewhere = try await server.admin("POST", "/admin/v1/tenants/branch/trusted-issuers", json: Self.bank)
            #expect(elsewhere.status == 201, "\(elsewhere.errorDescription ?? "")")
            let elsewhereID = try #require(elsewhere["id"] as? String)
            #expect(try await server.admin("GET", Self.base + "/\(elsewhereID)").status == 404)
            #expect(try await server.admin("DELETE", Self.base + "/\(elsewhereID)").status == 404)
        }
    }

    @Test("every call needs tenants:manage, which only system keys hold")
    func rightIsRequired() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", Self.base, json: Self.bank)
            let id = try #require(created["id"] as? String)
            let tenantRights = AdminRight.allCases.filter { $0 != .tenantsManage }.map(\.rawValue)
            let issued = try await server.admin(
                "POST", "/admin/v1/tenants/default/admin-keys", json: ["name": "bank ops", "rights": tenantRights])
            let key = try #require(issued["secret"] as? String, "\(issued.errorDescription ?? "")")
            let calls: [(String, String, [String: any Sendable]?)] = [
                ("GET", Self.base, nil), ("POST", Self.base, Self.body(["issuer": "https://other.example"])),
                ("GET", Self.base + "/\(id)", nil), ("PATCH", Self.base + "/\(id)", ["audience": "x"]),
                ("DELETE", Self.base + "/\(id)", nil),
            ]
            for (method, path, json) in calls {
                let answer = try await server.call(method, path, key: key, json: json)
                #expect(answer.status == 403, "\(method) \(path)")
                #expect(answer["missing_right"] as? String == "tenants:manage", "\(method) \(path)")
            }
            #expect(try await server.admin("GET", Self.base + "/\(id)").data == created.data)
        }
    }

    @Test("every change is audited with the issuer and where its keys come from, never the URL")
    func changesAreAudited() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin(
                "POST", Self.base, json: Self.body(["jwks_uri": "https://login.bank.example/jwks?key=s3cr3t"]))
            let id = try #require(created["id"] as? String)
            _ = try await server.admin("PATCH", Self.base + "/\(id)", json: ["jwks": ["keys": [Self.key.publicJWK]]])
            _ = try await server.admin("DELETE", Self.base + "/\(id)")
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit")
            let events = (audit["items"] as? [[String: any Sendable]] ?? [])
                .filter { ($0["action"] as? String)?.hasPrefix("trusted_issuer.") == true }
            #expect(events.map { $0["action"] as? String }
                == ["trusted_issuer.deleted", "trusted_issuer.updated", "trusted_issuer.created"])
            #expect(events.allSatisfy { $0["target_type"] as? String == "trusted_issuer" && $0["target_id"] as? String == id })
            let details = events.map { $0["details"] as? [String: any Sendable] ?? [:] }
            #expect(details.allSatisfy { $0["issuer"] as? String == "https://login.bank.example" })
            #expect(details.map { $0["keys"] as? String } == [nil, "jwks", "jwks_uri"])
            #expect(!String(decoding: audit.data, as: UTF8.self).contains("s3cr3t"))
        }
    }

    @Test("countersign admin trusted-issuer create, list, show, update and delete, as docs/api.md shows them",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func commandLine() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            func run(_ arguments: [String]) async throws -> [String: Any]? {
                let run = try await CommandLineTests.run(["admin", "trusted-issuer"] + arguments, environment: environment)
                #expect(run.status == 0, "\(arguments): \(run.output)")
                return run.output.isEmpty ? nil : try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
            }
            // The example of docs/api.md §19, word for word.
            let created = try #require(try await run([
                "create", "--issuer", "https://login.bank.example", "--jwks-uri", "https://login.bank.example/oauth2/jwks",
                "--audience", "bank-app",
            ]))
            let id = try #require(created["id"] as? String)
            #expect(created["username_claim"] as? String == "preferred_username")
            await #expect(((try run(["list"]))?["items"] as? [[String: Any]])?.count == 1)
            await #expect((try run(["show", id]))?["jwks_uri"] as? String == "https://login.bank.example/oauth2/jwks")

            let keyFile = server.scratch.directory.appendingPathComponent("bank-jwks.json")
            try JSONSerialization.data(withJSONObject: ["keys": [Self.key.publicJWK]]).write(to: keyFile)
            let updated = try #require(try await run([
                "update", id, "--jwks-file", keyFile.path, "--username-claim", "email", "--required-scope", "",
            ]))
            #expect(updated["jwks"] != nil && updated["jwks_uri"] == nil)
            #expect(updated["required_scope"] as? String == "")
            #expect(try await run(["delete", id]) == nil)

            let refused = try await CommandLineTests.run(
                ["admin", "trusted-issuer", "create", "--issuer", "http://login.bank.example", "--audience", "a",
                 "--jwks-uri", "https://login.bank.example/jwks"], environment: environment)
            #expect(refused.status != 0)
            #expect(refused.output.contains(
                "400 invalid_request: field issuer is invalid: must use https (http is allowed only to 127.0.0.1)"))
        }
    }
}
