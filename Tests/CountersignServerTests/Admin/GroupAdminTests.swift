import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// `/admin/v1/tenants/{tenant}/groups` and `…/users/{id}/groups`: making, renaming and deleting a
/// tenant's groups, who is in them, the rule of a name, the rights, the pages, the audit, and a
/// directory's group changed by hand with word that the next sync may undo it.
@Suite("Group administration")
struct GroupAdminTests {
    static let base = "/admin/v1/tenants/default/groups"

    /// A group as the API shows it.
    struct Shown: Decodable, Equatable {
        var id: String
        var tenantId: String
        var name: String
        var externalId: String?
        var source: String
        var sourceId: String?
        var createdAt: String
        var updatedAt: String
        var memberCount: Int
    }

    static func shown(_ answer: TestServer.Answer) throws -> Shown {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Shown.self, from: answer.data)
    }

    static func items(_ answer: TestServer.Answer) -> [[String: any Sendable]] {
        answer["items"] as? [[String: any Sendable]] ?? []
    }

    static func create(_ name: String, on server: TestServer, tenant: String = "default") async throws -> String {
        let answer = try await server.admin("POST", "/admin/v1/tenants/\(tenant)/groups", json: ["name": name])
        #expect(answer.status == 201, "creating \(name): \(answer.errorDescription ?? "")")
        return try #require(answer["id"] as? String)
    }

    /// A group as the tenant's directory sync would store it: changed by hand, it answers with
    /// the sync notice.
    static func directoryGroup(_ name: String, on server: TestServer) async throws -> UserGroup {
        let tenant = try #require(try await server.database.first(
            "SELECT id FROM tenants WHERE slug = 'default'", column: "id", as: String.self))
        let date = Date(timeIntervalSince1970: (server.clock.now.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        let group = UserGroup(id: Identifier.make("grp", at: date), tenantID: tenant, name: name, externalID: nil,
                              source: .directory, sourceID: "entry-\(name)", createdAt: date, updatedAt: date)
        try await SQLGroupRepository().insert(group, on: server.database)
        return group
    }

    @Test("create, show, list, rename, set and remove the external id, delete: the users stay", arguments: Engine.available)
    func lifecycle(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let created = try await server.admin("POST", Self.base, json: ["name": "  VPN users\t", "external_id": "ext-7"])
            #expect(created.status == 201, "\(created.errorDescription ?? "")")
            let group = try Self.shown(created)
            #expect(group.id.hasPrefix("grp_") && group.tenantId.hasPrefix("ten_"))
            #expect(group == Shown(id: group.id, tenantId: group.tenantId, name: "VPN users", externalId: "ext-7", source: "local",
                                   sourceId: nil, createdAt: group.createdAt, updatedAt: group.createdAt, memberCount: 0),
                    "the name is trimmed; the group is local")
            #expect(created.header("Countersign-Sync-Notice") == nil)
            let path = Self.base + "/\(group.id)"
            #expect(try Self.shown(try await server.admin("GET", path)) == group)
            let listed = try await server.admin("GET", Self.base)
            #expect(Self.items(listed).map { $0["id"] as? String } == [group.id])
            #expect(listed.json?["next_cursor"] is NSNull)

            let ada = try await server.createUser("ada")
            #expect(try await server.admin("PUT", path + "/members/\(ada)").status == 204)
            server.clock.advance(by: 5)
            let renamed = try await server.admin("PATCH", path, json: ["name": "Remote access", "external_id": ""])
            #expect(renamed.status == 200, "\(renamed.errorDescription ?? "")")
            let after = try Self.shown(renamed)
            #expect(after.name == "Remote access" && after.externalId == nil && after.memberCount == 1)
            #expect(after.updatedAt != group.updatedAt && after.createdAt == group.createdAt)
            #expect(try Self.shown(try await server.admin("GET", path)) == after)

            let deleted = try await server.admin("DELETE", path)
            #expect(deleted.status == 204 && deleted.data.isEmpty)
            let gone = try await server.admin("GET", path)
            #expect(gone.status == 404 && gone.errorDescription == "group \(group.id) was not found")
            for (method, suffix) in [("DELETE", ""), ("PATCH", ""), ("GET", "/members"), ("PUT", "/members/\(ada)")] {
                let again = try await server.admin(method, path + suffix, json: method == "PATCH" ? ["name": "x"] : nil)
                #expect(again.status == 404 && again.errorDescription == "group \(group.id) was not found", "\(method) \(suffix)")
            }
            #expect(try await server.admin("GET", "/admin/v1/tenants/default/users/\(ada)").status == 200, "the user stays")
            #expect(Self.items(try await server.admin("GET", "/admin/v1/tenants/default/users/\(ada)/groups")).isEmpty)
        }
    }

    @Test("a name taken in the tenant is a 409 on create and on rename; another tenant, or another case, may have it",
          arguments: Engine.available)
    func namesAreUniqueInTheTenant(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let first = try await Self.create("VPN users", on: server)
            let taken = try await server.admin("POST", Self.base, json: ["name": " VPN users "])
            #expect(taken.status == 409 && taken.error == "conflict")
            #expect(taken.errorDescription == "a group named VPN users already exists in this tenant")
            let second = try await Self.create("Admins", on: server)
            let renamed = try await server.admin("PATCH", Self.base + "/\(second)", json: ["name": "VPN users"])
            #expect(renamed.status == 409 && renamed.errorDescription == "a group named VPN users already exists in this tenant")
            #expect(try Self.shown(try await server.admin("GET", Self.base + "/\(second)")).name == "Admins", "nothing changed")
            #expect(try await server.admin("PATCH", Self.base + "/\(first)", json: ["name": "VPN users"]).status == 200,
                    "keeping its own name is no conflict")
            _ = try await Self.create("vpn users", on: server)

            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "branch", "display_name": "Branch"]).status == 201)
            _ = try await Self.create("VPN users", on: server, tenant: "branch")
        }
    }

    static let badBodies: [(String, [String: any Sendable], String)] = [
        ("missing", [:], "field name is required"),
        ("null", ["name": NSNull()], "field name is required"),
        ("empty", ["name": ""], Self.nameRule),
        ("only spaces", ["name": "   "], Self.nameRule),
        ("too long", ["name": String(repeating: "g", count: 129)], Self.nameRule),
        ("a line break inside", ["name": "VPN\nusers"], Self.nameRule),
        ("a bidirectional override", ["name": "Bank \u{202E}NPV"], Self.nameRule),
        ("a zero-width space", ["name": "VPN\u{200B}users"], Self.nameRule),
        ("a number", ["name": 7], "field name has the wrong type"),
        ("an empty external id", ["name": "VPN", "external_id": ""], Self.externalRule),
        ("a control character in the external id", ["name": "VPN", "external_id": "a\u{1}b"], Self.externalRule),
        ("a long external id", ["name": "VPN", "external_id": String(repeating: "x", count: 256)], Self.externalRule),
    ]
    static let nameRule = "field name is invalid: 1 to 128 characters without control or format characters (such as bidirectional overrides)"
    static let externalRule = "field external_id is invalid: 1 to 255 characters without control or format characters"

    @Test("a bad body is a 400 naming the field and its rule, and nothing is stored", arguments: 0..<badBodies.count)
    func badBodiesAreRefused(index: Int) async throws {
        let (what, body, message) = Self.badBodies[index]
        try await TestServer.routed { server in
            let answer = try await server.admin("POST", Self.base, json: body)
            #expect(answer.status == 400 && answer.error == "invalid_request", "\(what)")
            #expect(answer.errorDescription == message, "\(what)")
            #expect(Self.items(try await server.admin("GET", Self.base)).isEmpty, "\(what)")
        }
    }

    @Test("a rename is held to the same rule; 128 characters pass")
    func renameIsHeldToTheRule() async throws {
        try await TestServer.routed { server in
            let id = try await Self.create("VPN users", on: server)
            for name in ["", " ", "a\u{202E}b", String(repeating: "n", count: 129)] {
                let answer = try await server.admin("PATCH", Self.base + "/\(id)", json: ["name": name])
                #expect(answer.status == 400 && answer.errorDescription == Self.nameRule, "\(name)")
            }
            let longest = String(repeating: "é", count: 128)
            let answer = try await server.admin("PATCH", Self.base + "/\(id)", json: ["name": longest])
            #expect(answer.status == 200 && answer["name"] as? String == longest)
        }
    }

    @Test("members: added once (again is no change), listed by page, a user's groups, removed; a non-member is 404",
          arguments: Engine.available)
    func members(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let vpn = try await Self.create("VPN users", on: server)
            let admins = try await Self.create("Admins", on: server)
            let users = try await ["ada", "bob", "cy"].asyncMap { try await server.createUser($0) }
            for user in users {
                #expect(try await server.admin("PUT", Self.base + "/\(vpn)/members/\(user)").status == 204)
            }
            #expect(try await server.admin("PUT", Self.base + "/\(vpn)/members/\(users[0])").status == 204, "already a member")
            #expect(try await server.admin("PUT", Self.base + "/\(admins)/members/\(users[0])").status == 204)
            #expect(try Self.shown(try await server.admin("GET", Self.base + "/\(vpn)")).memberCount == 3)

            let first = try await server.admin("GET", Self.base + "/\(vpn)/members?limit=2")
            #expect(Self.items(first).map { $0["username"] as? String } == ["ada", "bob"])
            #expect(Self.items(first).map { $0["user_id"] as? String } == Array(users.prefix(2)))
            let cursor = try #require(first.json?["next_cursor"] as? String)
            #expect(cursor == users[1])
            let second = try await server.admin("GET", Self.base + "/\(vpn)/members?limit=2&cursor=\(cursor)")
            #expect(Self.items(second).map { $0["username"] as? String } == ["cy"])
            #expect(second.json?["next_cursor"] is NSNull)

            let adaGroups = try await server.admin("GET", "/admin/v1/tenants/default/users/\(users[0])/groups")
            #expect(adaGroups.status == 200)
            #expect(Self.items(adaGroups).map { $0["name"] as? String } == ["Admins", "VPN users"], "by name")
            #expect(Self.items(adaGroups).map { $0["member_count"] as? Int } == [1, 3])
            #expect(adaGroups.json?["next_cursor"] is NSNull)

            #expect(try await server.admin("DELETE", Self.base + "/\(vpn)/members/\(users[1])").status == 204)
            let again = try await server.admin("DELETE", Self.base + "/\(vpn)/members/\(users[1])")
            #expect(again.status == 404 && again.errorDescription == "user \(users[1]) in group \(vpn) was not found")
            #expect(Self.items(try await server.admin("GET", Self.base + "/\(vpn)/members")).map { $0["username"] as? String }
                    == ["ada", "cy"])
            #expect(try await server.admin("GET", "/admin/v1/tenants/default/users/\(users[1])").status == 200, "the user stays")

            // A deleted user leaves their groups.
            #expect(try await server.admin("DELETE", "/admin/v1/tenants/default/users/\(users[2])").status == 204)
            #expect(try Self.shown(try await server.admin("GET", Self.base + "/\(vpn)")).memberCount == 1)
            let unknown = try await server.admin("GET", "/admin/v1/tenants/default/users/\(users[2])/groups")
            #expect(unknown.status == 404 && unknown.errorDescription == "user \(users[2]) was not found")
        }
    }

    @Test("a user of another tenant, or no user, is never added: 404, and the other tenant's groups are not reachable",
          arguments: Engine.available)
    func otherTenantsUsersAreRefused(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "branch", "display_name": "Branch"]).status == 201)
            let stranger = try await server.createUser("eve", tenant: "branch")
            let theirs = try await Self.create("Branch staff", on: server, tenant: "branch")
            let vpn = try await Self.create("VPN users", on: server)
            for user in [stranger, "usr_nobody"] {
                let added = try await server.admin("PUT", Self.base + "/\(vpn)/members/\(user)")
                #expect(added.status == 404 && added.errorDescription == "user \(user) was not found")
                let removed = try await server.admin("DELETE", Self.base + "/\(vpn)/members/\(user)")
                #expect(removed.status == 404 && removed.errorDescription == "user \(user) was not found")
            }
            #expect(try Self.shown(try await server.admin("GET", Self.base + "/\(vpn)")).memberCount == 0)
            #expect(try await server.admin("GET", Self.base + "/\(theirs)").status == 404)
            #expect(try await server.admin("PUT", Self.base + "/\(theirs)/members/\(stranger)").status == 404)
            #expect(try await server.admin("GET", "/admin/v1/tenants/default/users/\(stranger)/groups").status == 404)
            #expect(Self.items(try await server.admin("GET", "/admin/v1/tenants/branch/groups/\(theirs)/members")).isEmpty)
        }
    }

    @Test("reading takes users:read and every change users:manage")
    func rightsAreRequired() async throws {
        try await TestServer.routed { server in
            let id = try await Self.create("VPN users", on: server)
            let ada = try await server.createUser("ada")
            func key(without right: AdminRight) async throws -> String {
                let rights = AdminRight.allCases.filter { $0 != right && $0 != .tenantsManage }.map(\.rawValue)
                let issued = try await server.admin(
                    "POST", "/admin/v1/tenants/default/admin-keys", json: ["name": "no \(right.rawValue)", "rights": rights])
                return try #require(issued["secret"] as? String, "\(issued.errorDescription ?? "")")
            }
            let reads = [Self.base, Self.base + "/\(id)", Self.base + "/\(id)/members", "/admin/v1/tenants/default/users/\(ada)/groups"]
            let reader = try await key(without: .usersManage)
            for path in reads {
                #expect(try await server.call("GET", path, key: reader).status == 200, "\(path)")
            }
            let changes: [(String, String, [String: any Sendable]?)] = [
                ("POST", Self.base, ["name": "Admins"]), ("PATCH", Self.base + "/\(id)", ["name": "Renamed"]),
                ("PUT", Self.base + "/\(id)/members/\(ada)", nil), ("DELETE", Self.base + "/\(id)/members/\(ada)", nil),
                ("DELETE", Self.base + "/\(id)", nil),
            ]
            for (method, path, json) in changes {
                let answer = try await server.call(method, path, key: reader, json: json)
                #expect(answer.status == 403 && answer["missing_right"] as? String == "users:manage", "\(method) \(path)")
            }
            let manager = try await key(without: .usersRead)
            for path in reads {
                let answer = try await server.call("GET", path, key: manager)
                #expect(answer.status == 403 && answer["missing_right"] as? String == "users:read", "\(path)")
            }
            let group = try Self.shown(try await server.admin("GET", Self.base + "/\(id)"))
            #expect(group.name == "VPN users" && group.memberCount == 0, "nothing changed")
        }
    }

    @Test("the list pages by id, searches by name prefix in any case, filters by source, and refuses bad filters")
    func listPagesAndFilters() async throws {
        try await TestServer.routed { server in
            let ids = try await ["VPN users", "vpn_admins", "Admins", "Sales"].asyncMap { try await Self.create($0, on: server) }
            let directory = try await Self.directoryGroup("VPN contractors", on: server)
            let first = try await server.admin("GET", Self.base + "?limit=2")
            #expect(Self.items(first).map { $0["id"] as? String } == Array(ids.prefix(2)))
            let cursor = try #require(first.json?["next_cursor"] as? String)
            let rest = try await server.admin("GET", Self.base + "?limit=2&cursor=\(cursor)")
            #expect(Self.items(rest).map { $0["id"] as? String } == [ids[2], ids[3]])
            let last = try await server.admin("GET", Self.base + "?limit=2&cursor=\(try #require(rest.json?["next_cursor"] as? String))")
            #expect(Self.items(last).map { $0["id"] as? String } == [directory.id] && last.json?["next_cursor"] is NSNull)

            let search = try await server.admin("GET", Self.base + "?q=vPn")
            #expect(Self.items(search).map { $0["name"] as? String } == ["VPN users", "vpn_admins", "VPN contractors"])
            let underscore = try await server.admin("GET", Self.base + "?q=vpn_")
            #expect(Self.items(underscore).map { $0["name"] as? String } == ["vpn_admins"], "_ is itself, not a wildcard")
            let synced = try await server.admin("GET", Self.base + "?source=directory")
            #expect(Self.items(synced).map { $0["name"] as? String } == ["VPN contractors"])
            #expect(Self.items(synced).first?["source_id"] as? String == "entry-VPN contractors")
            let both = try await server.admin("GET", Self.base + "?source=local&q=vpn")
            #expect(Self.items(both).map { $0["name"] as? String } == ["VPN users", "vpn_admins"])

            for (query, message) in [
                ("source=ldap", "source must be local, scim or directory"),
                ("source=local&source=scim", "query parameter source is given more than once"),
                ("q=", "q must be 1 to 128 characters without control characters"),
                ("q=a&q=b", "query parameter q is given more than once"),
                ("limit=0", "limit must be a whole number from 1 to 200"),
            ] {
                let answer = try await server.admin("GET", Self.base + "?\(query)")
                #expect(answer.status == 400 && answer.errorDescription == message, "\(query)")
            }
        }
    }

    @Test("every change is audited with the group and, for members, the user; the audit log names the group")
    func changesAreAudited() async throws {
        try await TestServer.routed { server in
            let id = try await Self.create("VPN users", on: server)
            let ada = try await server.createUser("ada")
            _ = try await server.admin("PUT", Self.base + "/\(id)/members/\(ada)")
            _ = try await server.admin("PUT", Self.base + "/\(id)/members/\(ada)")
            _ = try await server.admin("PATCH", Self.base + "/\(id)", json: ["name": "Remote access"])
            let beforeDeletion = try await server.admin("GET", "/admin/v1/tenants/default/audit?action=group.created")
            #expect(Self.items(beforeDeletion).first?["target_name"] as? String == "Remote access", "named as it is now")
            _ = try await server.admin("DELETE", Self.base + "/\(id)/members/\(ada)")
            _ = try await server.admin("PUT", Self.base + "/\(id)/members/\(ada)")
            _ = try await server.admin("DELETE", Self.base + "/\(id)")

            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit")
            let events = Self.items(audit).filter { ($0["action"] as? String)?.hasPrefix("group.") == true }
            #expect(events.map { $0["action"] as? String } == [
                "group.deleted", "group.member_added", "group.member_removed", "group.updated", "group.member_added", "group.created",
            ], "adding a member twice is recorded once")
            let keyID = try #require(server.adminKey.split(separator: ".").first.map(String.init))
            #expect(events.allSatisfy {
                $0["target_type"] as? String == "group" && $0["target_id"] as? String == id && $0["actor"] as? String == "admin-key:\(keyID)"
            })
            let details = events.map { $0["details"] as? [String: String] ?? [:] }
            try #require(details.count == 6)
            #expect(details[5] == ["name": "VPN users", "source": "local"])
            #expect(details[4] == ["name": "VPN users", "user_id": ada, "username": "ada"])
            #expect(details[3] == ["name": "Remote access", "source": "local", "previous_name": "VPN users"])
            #expect(details[2] == ["name": "Remote access", "user_id": ada, "username": "ada"])
            #expect(details[0] == ["name": "Remote access", "source": "local", "members": "1"])
        }
    }

    @Test("a directory's group may be renamed, given members and deleted by hand; each answer says the next sync may undo it",
          arguments: Engine.available)
    func directoryGroupsAreChangedWithANotice(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let group = try await Self.directoryGroup("Engineering", on: server)
            let notice = "group \(group.id) is kept by the tenant's directory; its next sync may undo this change"
            let ada = try await server.createUser("ada")
            let path = Self.base + "/\(group.id)"
            #expect(try await server.admin("GET", path).header("Countersign-Sync-Notice") == nil, "reading is no change")

            let renamed = try await server.admin("PATCH", path, json: ["name": "Engineering (all)"])
            #expect(renamed.status == 200 && renamed.header("Countersign-Sync-Notice") == notice)
            #expect(renamed["source"] as? String == "directory" && renamed["source_id"] as? String == "entry-Engineering",
                    "the group stays the directory's")
            let added = try await server.admin("PUT", path + "/members/\(ada)")
            #expect(added.status == 204 && added.header("Countersign-Sync-Notice") == notice)
            let removed = try await server.admin("DELETE", path + "/members/\(ada)")
            #expect(removed.status == 204 && removed.header("Countersign-Sync-Notice") == notice)
            let refused = try await server.admin("DELETE", path + "/members/\(ada)")
            #expect(refused.status == 404 && refused.header("Countersign-Sync-Notice") == nil, "a refusal changed nothing")
            let deleted = try await server.admin("DELETE", path)
            #expect(deleted.status == 204 && deleted.header("Countersign-Sync-Notice") == notice)
        }
    }
}

extension Array {
    /// The elements mapped in order, one after another.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var mapped: [T] = []
        for element in self { mapped.append(try await transform(element)) }
        return mapped
    }
}
