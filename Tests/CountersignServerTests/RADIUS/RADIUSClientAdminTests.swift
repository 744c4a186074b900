import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// `/admin/v1/tenants/{tenant}/radius-clients`: registering, reading, changing and deleting the
/// gateways that ask over RADIUS; their shared secrets, shown once when generated and stored
/// sealed; the rule each field is held to; networks that overlap no other client's; the rights
/// and the audit.
@Suite("RADIUS client administration")
struct RADIUSClientAdminTests {
    static let base = "/admin/v1/tenants/default/radius-clients"
    static let vpn: [String: any Sendable] = ["name": "VPN concentrator", "networks": ["192.0.2.0/24", "2001:db8:1::/48"]]
    /// A secret an administrator types in, as the gateway already has it.
    static let givenSecret = "correct-horse-battery-staple"

    /// A RADIUS client as the API shows it.
    struct Shown: Decodable, Equatable {
        var id: String
        var name: String
        var networks: [String]
        var mode: String
        var waitSeconds: Int
        var stripRealm: Bool
        var stripDomain: Bool
        var unenrolledUsers: String
        var replyAttributes: [[String: String]]
        var createdAt: String
        var updatedAt: String
    }

    /// The RADIUS client of an answer: the `radius_client` of a create or rotate answer, the
    /// answer itself for show and change.
    static func shown(_ answer: TestServer.Answer) throws -> Shown {
        struct WithSecret: Decodable { let radiusClient: Shown }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        if answer["radius_client"] != nil { return try decoder.decode(WithSecret.self, from: answer.data).radiusClient }
        return try decoder.decode(Shown.self, from: answer.data)
    }

    /// The sealed shared secret as stored, and what it opens to.
    static func stored(_ id: String, on server: TestServer) async throws -> (sealed: Data, secret: String) {
        let sealed = try #require(try await server.database.first(
            "SELECT secret_sealed FROM radius_clients WHERE id = \(id)", column: "secret_sealed", as: Data.self))
        let opened = try server.sealer.open(sealed, context: RADIUSClient.secretContext(id))
        return (sealed, String(decoding: opened, as: UTF8.self))
    }

    /// Whether `secret` is one Countersign generated: 32 characters of base64url.
    static func isGenerated(_ secret: String) -> Bool {
        secret.range(of: "^[A-Za-z0-9_-]{32}$", options: .regularExpression) != nil
    }

    @Test("create with the defaults and a secret shown once, show, list, change, rotate and delete", arguments: Engine.available)
    func lifecycle(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let created = try await server.admin("POST", Self.base, json: Self.vpn)
            #expect(created.status == 201, "\(created.errorDescription ?? "")")
            let client = try Self.shown(created)
            #expect(client.id.hasPrefix("rdc_"))
            #expect(client == Shown(
                id: client.id, name: "VPN concentrator", networks: ["192.0.2.0/24", "2001:db8:1::/48"], mode: "push",
                waitSeconds: 20, stripRealm: false, stripDomain: false, unenrolledUsers: "reject", replyAttributes: [],
                createdAt: client.createdAt, updatedAt: client.createdAt))
            let secret = try #require(created["secret"] as? String)
            #expect(Self.isGenerated(secret))
            #expect(try await Self.stored(client.id, on: server).secret == secret)
            let path = Self.base + "/\(client.id)"

            let shown = try await server.admin("GET", path)
            #expect(shown.status == 200)
            #expect(try Self.shown(shown) == client)
            #expect(!String(decoding: shown.data, as: UTF8.self).contains(secret))
            let list = try await server.admin("GET", Self.base)
            #expect((list["items"] as? [[String: any Sendable]])?.map { $0["id"] as? String } == [client.id])
            #expect(list.json?["next_cursor"] is NSNull)

            server.clock.advance(by: 5)
            let changed = try await server.admin("PATCH", path, json: [
                "name": "VPN concentrator (Paris)", "networks": ["203.0.113.0/25"], "mode": "push-number",
                "wait_seconds": 45, "strip_realm": true, "strip_domain": true, "unenrolled_users": "accept",
                "reply_attributes": [["name": "Filter-Id", "value": "vpn-users"], ["name": "Session-Timeout", "value": 28800] as [String: any Sendable]],
            ])
            #expect(changed.status == 200, "\(changed.errorDescription ?? "")")
            let after = try Self.shown(changed)
            #expect(after == Shown(
                id: client.id, name: "VPN concentrator (Paris)", networks: ["203.0.113.0/25"], mode: "push-number",
                waitSeconds: 45, stripRealm: true, stripDomain: true, unenrolledUsers: "accept",
                replyAttributes: [["name": "Filter-Id", "value": "vpn-users"], ["name": "Session-Timeout", "value": "28800"]],
                createdAt: client.createdAt, updatedAt: after.updatedAt))
            #expect(after.updatedAt != client.updatedAt)
            #expect(try Self.shown(try await server.admin("GET", path)) == after)
            #expect(try await Self.stored(client.id, on: server).secret == secret, "a change keeps the secret")

            server.clock.advance(by: 5)
            let rotated = try await server.admin("POST", path + "/secret")
            #expect(rotated.status == 200, "\(rotated.errorDescription ?? "")")
            let newSecret = try #require(rotated["secret"] as? String)
            #expect(Self.isGenerated(newSecret) && newSecret != secret)
            #expect(try Self.shown(rotated).updatedAt != after.updatedAt)
            #expect(try Self.shown(try await server.admin("GET", path)) == Self.shown(rotated))
            #expect(try await Self.stored(client.id, on: server).secret == newSecret)

            let given = try await server.admin("POST", path + "/secret", json: ["secret": Self.givenSecret])
            #expect(given.status == 200, "\(given.errorDescription ?? "")")
            #expect(given["secret"] == nil && !String(decoding: given.data, as: UTF8.self).contains(Self.givenSecret))
            #expect(try await Self.stored(client.id, on: server).secret == Self.givenSecret)

            let deleted = try await server.admin("DELETE", path)
            #expect(deleted.status == 204 && deleted.data.isEmpty)
            let gone = try await server.admin("GET", path)
            #expect(gone.status == 404)
            #expect(gone.errorDescription == "RADIUS client \(client.id) was not found")
            for (method, suffix) in [("DELETE", ""), ("PATCH", ""), ("POST", "/secret")] {
                let again = try await server.admin(method, path + suffix, json: method == "PATCH" ? ["name": "x"] : nil)
                #expect(again.status == 404, "\(method) \(suffix)")
            }
        }
    }

    @Test("a secret given on creation is kept and never shown back; every secret is stored sealed, not in clear",
          arguments: Engine.available)
    func secretsAreStoredSealed(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let created = try await server.admin("POST", Self.base, json: Self.body(["secret": Self.givenSecret]))
            #expect(created.status == 201, "\(created.errorDescription ?? "")")
            #expect(created["secret"] == nil && !String(decoding: created.data, as: UTF8.self).contains(Self.givenSecret))
            let given = try Self.shown(created).id

            let generated = try await server.admin("POST", Self.base, json: ["name": "Firewall", "networks": ["198.51.100.0/24"]])
            let generatedID = try Self.shown(generated).id
            let secret = try #require(generated["secret"] as? String)

            for (id, clear, other) in [(given, Self.givenSecret, generatedID), (generatedID, secret, given)] {
                let stored = try await Self.stored(id, on: server)
                #expect(stored.secret == clear)
                #expect(stored.sealed.range(of: Data(clear.utf8)) == nil, "the column holds the secret in clear")
                // Sealed to its own row: copied into another client's, it does not open.
                #expect(throws: SealingError.self) {
                    try server.sealer.open(stored.sealed, context: RADIUSClient.secretContext(other))
                }
            }
        }
    }

    static let changes: [(String, any Sendable, @Sendable (inout Shown) -> Void)] = [
        ("name", "  Branch firewall\n", { $0.name = "Branch firewall" }),
        ("networks", ["198.51.100.7", "2001:DB8:2::/48"], { $0.networks = ["198.51.100.7/32", "2001:db8:2::/48"] }),
        ("mode", "passcode", { $0.mode = "passcode" }),
        ("wait_seconds", 120, { $0.waitSeconds = 120 }),
        ("strip_realm", true, { $0.stripRealm = true }),
        ("strip_domain", true, { $0.stripDomain = true }),
        ("unenrolled_users", "accept", { $0.unenrolledUsers = "accept" }),
        ("reply_attributes", [["name": "Class", "value": "staff"], ["name": "Idle-Timeout", "value": "600"]],
         { $0.replyAttributes = [["name": "Class", "value": "staff"], ["name": "Idle-Timeout", "value": "600"]] }),
    ]

    @Test("each member can be changed alone, and is shown as stored; the others keep their value", arguments: changes)
    func eachMemberChangesAlone(_ member: String, value: any Sendable, change: @Sendable (inout Shown) -> Void) async throws {
        try await TestServer.routed { server in
            let created = try Self.shown(try await server.admin("POST", Self.base, json: Self.vpn))
            server.clock.advance(by: 1)
            let answer = try await server.admin("PATCH", Self.base + "/\(created.id)", json: [member: value])
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
            let changed = try Self.shown(answer)
            var expected = created
            change(&expected)
            expected.updatedAt = changed.updatedAt
            #expect(changed == expected)
            #expect(changed.updatedAt != created.updatedAt)
        }
    }

    @Test("the shared secret is not changed by PATCH: it is refused there, and the secret kept")
    func patchRefusesSecret() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", Self.base, json: Self.vpn)
            let id = try Self.shown(created).id
            let answer = try await server.admin("PATCH", Self.base + "/\(id)", json: ["name": "Renamed", "secret": Self.givenSecret])
            #expect(answer.status == 400)
            #expect(answer.errorDescription
                == "field secret is invalid: is changed with POST /admin/v1/tenants/{tenant}/radius-clients/{id}/secret")
            #expect(try Self.shown(try await server.admin("GET", Self.base + "/\(id)")) == Self.shown(created))
            #expect(try await Self.stored(id, on: server).secret == created["secret"] as? String)
        }
    }

    @Test("a secret given to a rotation is held to the rule of secrets, and a refused one keeps the old")
    func rotationRefusesShortSecret() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", Self.base, json: Self.vpn)
            let id = try Self.shown(created).id
            for secret in ["too-short", "sixteen chars but spaces"] {
                let answer = try await server.admin("POST", Self.base + "/\(id)/secret", json: ["secret": secret])
                #expect(answer.status == 400, "\(secret)")
                #expect(answer.errorDescription
                    == "field secret is invalid: must be 16 to 128 printable ASCII characters without spaces", "\(secret)")
            }
            #expect(try await Self.stored(id, on: server).secret == created["secret"] as? String)
        }
    }

    /// `vpn` with `changes` applied; a member named in `removing` is left out.
    static func body(_ changes: [String: any Sendable], removing: [String] = []) -> [String: any Sendable] {
        var body = vpn
        body.merge(changes) { $1 }
        for name in removing { body[name] = nil }
        return body
    }

    static let nameRule = "field name is invalid: 1 to 100 characters without control or format characters (such as bidirectional overrides)"
    static let offered = "Acct-Interim-Interval, Class, Filter-Id, Framed-Pool, Framed-Route, Idle-Timeout, Service-Type, Session-Timeout"

    static let badBodies: [(String, [String: any Sendable], String)] = [
        ("no name", body([:], removing: ["name"]), "field name is required"),
        ("no networks", body([:], removing: ["networks"]), "field networks is required"),
        ("a blank name", body(["name": " \n "]), nameRule),
        ("a name with a control character", body(["name": "VPN\u{7}"]), nameRule),
        // What the phone shows the user approving a login: "Bank VPN" must not be made to read
        // as another name.
        ("a name with a bidirectional override", body(["name": "Bank \u{202E}NPV"]), nameRule),
        ("a name of 101 characters", body(["name": String(repeating: "n", count: 101)]), nameRule),
        ("no network", body(["networks": [String]()]), "field networks is invalid: give 1 to 64 networks"),
        ("65 networks", body(["networks": (0..<65).map { "10.0.\($0).0/24" }]), "field networks is invalid: give 1 to 64 networks"),
        ("a host name", body(["networks": ["vpn.example.com"]]),
         "field networks is invalid: vpn.example.com is not an IPv4 or IPv6 address or network"),
        ("an IPv4 prefix past 32", body(["networks": ["192.0.2.0/33"]]),
         "field networks is invalid: 192.0.2.0/33 has a prefix length that is not 0 to 32"),
        ("an IPv6 prefix past 128", body(["networks": ["2001:db8::/129"]]),
         "field networks is invalid: 2001:db8::/129 has a prefix length that is not 0 to 128"),
        ("host bits set", body(["networks": ["192.0.2.1/24"]]),
         "field networks is invalid: 192.0.2.1/24 has host bits set; write the network's first address"),
        ("two overlapping networks", body(["networks": ["10.0.0.0/8", "10.20.0.0/16"]]),
         "field networks is invalid: 10.20.0.0/16 overlaps 10.0.0.0/8"),
        ("a network twice", body(["networks": ["2001:db8::/32", "2001:DB8::/32"]]),
         "field networks is invalid: 2001:db8::/32 overlaps 2001:db8::/32"),
        ("a wait under 3 seconds", body(["wait_seconds": 2]),
         "field wait_seconds is invalid: must be 3 to 120, under the gateway's own timeout"),
        ("a wait over 120 seconds", body(["wait_seconds": 121]),
         "field wait_seconds is invalid: must be 3 to 120, under the gateway's own timeout"),
        ("an unknown mode", body(["mode": "sms"]), "field mode is invalid: must be one of push, push-number, passcode, auto"),
        ("an unknown answer for unenrolled users", body(["unenrolled_users": "allow"]),
         "field unenrolled_users is invalid: must be one of reject, accept"),
        ("a reply attribute not offered", body(["reply_attributes": [["name": "Framed-IP-Address", "value": "10.0.0.1"]]]),
         "field reply_attributes is invalid: Framed-IP-Address is not offered; use one of \(offered)"),
        ("an integer attribute that is no number", body(["reply_attributes": [["name": "Session-Timeout", "value": "8h"]]]),
         "field reply_attributes is invalid: the value of Session-Timeout must be a whole number from 0 to 4294967295"),
        ("an integer attribute past 32 bits", body(["reply_attributes": [["name": "Session-Timeout", "value": "4294967296"]]]),
         "field reply_attributes is invalid: the value of Session-Timeout must be a whole number from 0 to 4294967295"),
        ("an empty text attribute", body(["reply_attributes": [["name": "Filter-Id", "value": ""]]]),
         "field reply_attributes is invalid: the value of Filter-Id must be 1 to 253 octets of UTF-8"),
        ("17 reply attributes", body(["reply_attributes": Array(repeating: ["name": "Class", "value": "x"], count: 17)]),
         "field reply_attributes is invalid: give at most 16"),
        ("a short secret", body(["secret": "0123456789abcde"]),
         "field secret is invalid: must be 16 to 128 printable ASCII characters without spaces"),
        ("a secret with a space", body(["secret": "correct horse battery staple"]),
         "field secret is invalid: must be 16 to 128 printable ASCII characters without spaces"),
        ("a secret of 129 characters", body(["secret": String(repeating: "s", count: 129)]),
         "field secret is invalid: must be 16 to 128 printable ASCII characters without spaces"),
        ("a null mode", body(["mode": NSNull()]), "field mode must not be null"),
        ("a wait as text", body(["wait_seconds": "20"]), "field wait_seconds has the wrong type"),
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

    @Test("a network may overlap no other RADIUS client's: the tenant's own is named, another tenant's is not",
          arguments: Engine.available)
    func networksOverlapNoOtherClient(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let first = try await server.admin("POST", Self.base, json: Self.vpn)
            let firstID = try Self.shown(first).id
            let taken = try await server.admin(
                "POST", Self.base, json: ["name": "Firewall", "networks": ["198.51.100.0/24", "192.0.2.128/25"]])
            #expect(taken.status == 409)
            #expect(taken.error == "conflict")
            #expect(taken.errorDescription == "network 192.0.2.128/25 overlaps a network of RADIUS client \(firstID)")

            let second = try await server.admin("POST", Self.base, json: ["name": "Firewall", "networks": ["198.51.100.0/24"]])
            let secondID = try Self.shown(second).id
            let widened = try await server.admin("PATCH", Self.base + "/\(secondID)", json: ["networks": ["2001:db8::/32"]])
            #expect(widened.status == 409)
            #expect(widened.errorDescription == "network 2001:db8::/32 overlaps a network of RADIUS client \(firstID)")
            #expect(try Self.shown(try await server.admin("GET", Self.base + "/\(secondID)")) == Self.shown(second))
            // Its own networks are no conflict.
            let same = try await server.admin("PATCH", Self.base + "/\(firstID)", json: ["networks": ["192.0.2.0/24"]])
            #expect(same.status == 200, "\(same.errorDescription ?? "")")

            _ = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "branch", "display_name": "Branch"])
            let elsewhere = try await server.admin(
                "POST", "/admin/v1/tenants/branch/radius-clients", json: ["name": "Branch VPN", "networks": ["192.0.2.0/28"]])
            #expect(elsewhere.status == 409)
            #expect(elsewhere.errorDescription == "network 192.0.2.0/28 overlaps a network of another tenant's RADIUS client")
            #expect(!String(decoding: elsewhere.data, as: UTF8.self).contains(firstID))
            #expect(try await server.admin("GET", "/admin/v1/tenants/branch/radius-clients/\(firstID)").status == 404)
            #expect(try await server.admin("DELETE", "/admin/v1/tenants/branch/radius-clients/\(firstID)").status == 404)

            // Once deleted, its networks are free.
            #expect(try await server.admin("DELETE", Self.base + "/\(firstID)").status == 204)
            let freed = try await server.admin(
                "POST", "/admin/v1/tenants/branch/radius-clients", json: ["name": "Branch VPN", "networks": ["192.0.2.0/28"]])
            #expect(freed.status == 201, "\(freed.errorDescription ?? "")")
        }
    }

    @Test("reading takes clients:read and every change clients:manage")
    func rightsAreRequired() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", Self.base, json: Self.vpn)
            let id = try Self.shown(created).id
            func key(without right: AdminRight) async throws -> String {
                let rights = AdminRight.allCases.filter { $0 != right && $0 != .tenantsManage }.map(\.rawValue)
                let issued = try await server.admin(
                    "POST", "/admin/v1/tenants/default/admin-keys", json: ["name": "no \(right.rawValue)", "rights": rights])
                return try #require(issued["secret"] as? String, "\(issued.errorDescription ?? "")")
            }
            let reader = try await key(without: .clientsManage)
            #expect(try await server.call("GET", Self.base, key: reader).status == 200)
            #expect(try await server.call("GET", Self.base + "/\(id)", key: reader).status == 200)
            let changes: [(String, String, [String: any Sendable]?)] = [
                ("POST", Self.base, ["name": "Firewall", "networks": ["198.51.100.0/24"]]),
                ("PATCH", Self.base + "/\(id)", ["name": "Renamed"]), ("POST", Self.base + "/\(id)/secret", nil),
                ("DELETE", Self.base + "/\(id)", nil),
            ]
            for (method, path, json) in changes {
                let answer = try await server.call(method, path, key: reader, json: json)
                #expect(answer.status == 403, "\(method) \(path)")
                #expect(answer["missing_right"] as? String == "clients:manage", "\(method) \(path)")
            }
            let manager = try await key(without: .clientsRead)
            for path in [Self.base, Self.base + "/\(id)"] {
                let answer = try await server.call("GET", path, key: manager)
                #expect(answer.status == 403, "\(path)")
                #expect(answer["missing_right"] as? String == "clients:read", "\(path)")
            }
            #expect(try Self.shown(try await server.admin("GET", Self.base + "/\(id)")) == Self.shown(created))
            #expect(try await Self.stored(id, on: server).secret == created["secret"] as? String)
        }
    }

    @Test("every change is audited with what it changed and never a secret")
    func changesAreAudited() async throws {
        try await TestServer.routed { server in
            var body = Self.vpn
            body["mode"] = "auto"
            let created = try await server.admin("POST", Self.base, json: body)
            let id = try Self.shown(created).id
            let generated = try #require(created["secret"] as? String)
            _ = try await server.admin("PATCH", Self.base + "/\(id)", json: ["wait_seconds": 30])
            let rotated = try #require(try await server.admin("POST", Self.base + "/\(id)/secret")["secret"] as? String)
            _ = try await server.admin("POST", Self.base + "/\(id)/secret", json: ["secret": Self.givenSecret])
            _ = try await server.admin("DELETE", Self.base + "/\(id)")

            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit")
            let events = (audit["items"] as? [[String: any Sendable]] ?? [])
                .filter { ($0["action"] as? String)?.hasPrefix("radius_client.") == true }
            #expect(events.map { $0["action"] as? String } == [
                "radius_client.deleted", "radius_client.secret_rotated", "radius_client.secret_rotated",
                "radius_client.updated", "radius_client.created",
            ])
            let keyID = try #require(server.adminKey.split(separator: ".").first.map(String.init))
            #expect(events.allSatisfy {
                $0["target_type"] as? String == "radius_client" && $0["target_id"] as? String == id
                    && $0["actor"] as? String == "admin-key:\(keyID)"
            })
            let details = events.map { $0["details"] as? [String: String] ?? [:] }
            try #require(details.count == 5)
            #expect(details[4] == [
                "name": "VPN concentrator", "networks": "192.0.2.0/24 2001:db8:1::/48", "mode": "auto", "wait_seconds": "20",
                "unenrolled_users": "reject",
            ])
            #expect(details[3]["wait_seconds"] == "30" && details[3]["secret"] == nil)
            #expect(details[2]["secret"] == "replaced" && details[1]["secret"] == "replaced")
            #expect(details[0] == ["name": "VPN concentrator"])
            let text = String(decoding: audit.data, as: UTF8.self)
            for secret in [generated, rotated, Self.givenSecret] {
                #expect(!text.contains(secret))
            }
        }
    }
}
