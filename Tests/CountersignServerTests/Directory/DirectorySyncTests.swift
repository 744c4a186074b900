import Foundation
import Testing
@testable import CountersignServer

/// Directory sync against a real OpenLDAP server (`SlapdHarness`) through the admin API, on
/// both engines: what a sync creates, renames, disables and enables; groups with a nested one;
/// a dry run; a directory that fails mid-sync; paging past the server's size limit.
@Suite("Directory sync against slapd")
struct DirectorySyncTests {
    /// The tenant's directory settings for `slapd`, as an admin would send them: OpenLDAP over
    /// ldaps with the test CA.
    static func settings(_ slapd: SlapdHarness, _ changes: [String: any Sendable] = [:]) -> [String: any Sendable] {
        var body: [String: any Sendable] = [
            "kind": "openldap",
            "servers": [slapd.ldapsURL],
            "security": "ldaps",
            "ca_certificate": slapd.caPEM,
            "bind_dn": DirectoryFixture.serviceDN,
            "bind_password": DirectoryFixture.servicePassword,
            "user_base_dn": DirectoryFixture.people,
            "groups": ["base_dn": DirectoryFixture.groups] as [String: any Sendable],
            "sync_interval_minutes": 0,
        ]
        for (key, value) in changes { body[key] = value }
        return body
    }

    static let base = "/admin/v1/tenants/default/directory"

    /// Every user of the default tenant by username: (id, status, source, email, disabled_by_source).
    static func users(_ server: TestServer) async throws -> [String: [String: any Sendable]] {
        let page = try await server.admin("GET", "/admin/v1/tenants/default/users?limit=100")
        var found: [String: [String: any Sendable]] = [:]
        for item in page["items"] as? [[String: any Sendable]] ?? [] {
            found[item["username"] as? String ?? ""] = item
        }
        return found
    }

    /// The tenant's groups by name, each with its members' usernames.
    static func groups(_ server: TestServer) async throws -> [String: Set<String>] {
        let database = server.database
        var found: [String: Set<String>] = [:]
        for group in try await SQLGroupRepository().list(
            tenantID: try await server.defaultTenantID(), source: nil, name: nil, after: nil, limit: 100, on: database) {
            found[group.name] = Set(try await SQLGroupRepository().members(groupID: group.id, after: nil, limit: 100, on: database)
                .map(\.username))
        }
        return found
    }

    @Test("a first sync creates the people and the groups, nested members included; a second changes nothing",
          arguments: Engine.available)
    func firstSync(engine: Engine) async throws {
        guard let slapd = try await SlapdHarness.startIfAvailable() else { return }
        defer { slapd.shutdown() }
        try await TestServer.with(engine) { server in
            let created = try await server.admin("PUT", Self.base, json: Self.settings(slapd))
            #expect(created.status == 201, "\(created.errorDescription ?? "")")
            #expect(created["bind_password"] == nil)

            let preview = try await server.admin("POST", Self.base + "/sync", json: ["dry_run": true])
            #expect(preview.status == 200, "\(preview.errorDescription ?? "")")
            #expect(preview["dry_run"] as? Bool == true)
            #expect(Set(preview["users_created"] as? [String] ?? []) == ["alice", "bob", "carol", "dave"])
            #expect(try await Self.users(server).isEmpty, "a dry run writes nothing")

            let synced = try await server.admin("POST", Self.base + "/sync")
            #expect(synced.status == 200, "\(synced.errorDescription ?? "")")
            #expect(Set(synced["users_created"] as? [String] ?? []) == ["alice", "bob", "carol", "dave"])
            #expect(Set(synced["groups_created"] as? [String] ?? []) == ["staff", "engineering", "everyone"])
            #expect(synced["memberships_added"] as? Int == 5)
            let users = try await Self.users(server)
            #expect(users["alice"]?["source"] as? String == "directory")
            #expect(users["alice"]?["email"] as? String == "alice@example.test")
            #expect(users["carol"]?["display_name"] as? String == "Carol Lučić")
            #expect((users["alice"]?["source_id"] as? String)?.count == 36)
            #expect(try await Self.groups(server) == [
                "staff": ["alice"], "engineering": ["carol"], "everyone": ["alice", "carol", "dave"],
            ])

            let again = try await server.admin("POST", Self.base + "/sync")
            #expect(again.status == 200)
            for field in ["users_created", "users_updated", "users_disabled", "groups_created", "groups_deleted"] {
                #expect((again[field] as? [String])?.isEmpty == true, "\(field)")
            }
            #expect(again["memberships_added"] as? Int == 0 && again["memberships_removed"] as? Int == 0)
            let last = try await server.admin("GET", Self.base + "/sync")
            #expect((last["summary"] as? [String: any Sendable])?["users_found"] as? Int == 4)

            // Groups no longer synced are left as they are, members and all.
            let noGroups = Self.settings(slapd, ["groups": ["enabled": false] as [String: any Sendable]])
            #expect(try await server.admin("PUT", Self.base, json: noGroups).status == 200)
            let without = try await server.admin("POST", Self.base + "/sync")
            #expect((without["groups_deleted"] as? [String])?.isEmpty == true && without["memberships_removed"] as? Int == 0)
            #expect(try await Self.groups(server)["everyone"] == ["alice", "carol", "dave"])
        }
    }

    @Test("a rename keeps the user; one gone is disabled (never deleted) and enabled when back; an admin's disable stays",
          arguments: Engine.available)
    func renamesAndDisables(engine: Engine) async throws {
        guard let slapd = try await SlapdHarness.startIfAvailable() else { return }
        defer { slapd.shutdown() }
        try await TestServer.with(engine) { server in
            // Active Directory's way of saying who is disabled: bob's userAccountControl has bit 2.
            let adFilter = "(&(objectClass=inetOrgPerson)(!(userAccountControl:1.2.840.113556.1.4.803:=2)))"
            #expect(try await server.admin("PUT", Self.base, json: Self.settings(slapd, ["user_filter": adFilter])).status == 201)
            #expect(try await server.admin("POST", Self.base + "/sync").status == 200)
            var users = try await Self.users(server)
            #expect(Set(users.keys) == ["alice", "carol", "dave"])
            let alice = try #require(users["alice"]?["id"] as? String)
            let dave = try #require(users["dave"]?["id"] as? String)
            let uuidOfAlice = users["alice"]?["source_id"] as? String

            try await slapd.rename(DirectoryFixture.personDN("alice"), to: "uid=alice.archer")
            try await slapd.modify("""
                dn: \(DirectoryFixture.personDN("bob"))
                changetype: modify
                replace: userAccountControl
                userAccountControl: 512

                """)
            try await slapd.delete(DirectoryFixture.personDN("carol"))
            // An admin disables dave by hand: the directory must not enable him again.
            #expect(try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(dave)", json: ["status": "disabled"]).status == 200)

            let synced = try await server.admin("POST", Self.base + "/sync")
            #expect(synced.status == 200, "\(synced.errorDescription ?? "")")
            #expect(synced["users_updated"] as? [String] == ["alice.archer"])
            #expect(synced["users_created"] as? [String] == ["bob"])
            #expect(synced["users_disabled"] as? [String] == ["carol"])
            users = try await Self.users(server)
            #expect(users["alice.archer"]?["id"] as? String == alice, "a rename keeps the Countersign user")
            #expect(users["alice.archer"]?["source_id"] as? String == uuidOfAlice)
            #expect(users["carol"]?["status"] as? String == "disabled")
            #expect(users["carol"]?["disabled_by_source"] as? Bool == true)
            #expect(users["dave"]?["status"] as? String == "disabled")
            #expect(users["dave"]?["disabled_by_source"] as? Bool == false)
            #expect(try await Self.groups(server)["engineering"] == [], "carol left her groups with the directory")

            // Carol is back (a new entry, so a new entryUUID: the old user is kept by another id).
            try await slapd.add("""
                dn: \(DirectoryFixture.personDN("carol"))
                objectClass: inetOrgPerson
                uid: carol
                cn: Carol
                sn: Lučić

                """)
            let back = try await server.admin("POST", Self.base + "/sync")
            #expect((back["users_created"] as? [String])?.isEmpty == true)
            let skipped = back["skipped"] as? [[String: any Sendable]] ?? []
            #expect(skipped.contains { ($0["reason"] as? String)?.contains("a user named carol is kept by another directory entry") == true })

            // Bob disabled in the directory again: disabled here, and enabled when enabled there.
            try await slapd.modify("""
                dn: \(DirectoryFixture.personDN("bob"))
                changetype: modify
                replace: userAccountControl
                userAccountControl: 514

                """)
            #expect(try await server.admin("POST", Self.base + "/sync")["users_disabled"] as? [String] == ["bob"])
            try await slapd.modify("""
                dn: \(DirectoryFixture.personDN("bob"))
                changetype: modify
                replace: userAccountControl
                userAccountControl: 512

                """)
            #expect(try await server.admin("POST", Self.base + "/sync")["users_enabled"] as? [String] == ["bob"])
            #expect(try await Self.users(server)["bob"]?["status"] as? String == "active")
        }
    }

    @Test("a directory that fails mid-sync, or is down, changes nothing and says why", arguments: Engine.available)
    func failures(engine: Engine) async throws {
        guard let slapd = try await SlapdHarness.startIfAvailable() else { return }
        defer { slapd.shutdown() }
        try await TestServer.with(engine) { server in
            // The users are read, then the group search fails: nothing of what was read is written.
            let broken = Self.settings(slapd, ["groups": ["base_dn": "ou=missing,\(DirectoryFixture.suffix)"] as [String: any Sendable]])
            #expect(try await server.admin("PUT", Self.base, json: broken).status == 201)
            let failed = try await server.admin("POST", Self.base + "/sync")
            #expect(failed.status == 502)
            #expect(failed.error == "directory_unavailable")
            #expect(failed.errorDescription?.contains("nothing was changed") == true)
            #expect(try await Self.users(server).isEmpty)
            let record = try await server.admin("GET", Self.base + "/sync")
            #expect((record["error"] as? String)?.contains("ou=missing") == true, "\(record.json ?? [:])")

            #expect(try await server.admin("PUT", Self.base, json: Self.settings(slapd)).status == 200)
            #expect(try await server.admin("POST", Self.base + "/sync").status == 200)
            slapd.stop()
            let down = try await server.admin("POST", Self.base + "/sync")
            #expect(down.status == 502)
            #expect(try await Self.users(server).values.allSatisfy { $0["status"] as? String == "active" })
            try await slapd.restart()

            // A search that matches no one would disable everyone: refused.
            #expect(try await server.admin("PUT", Self.base, json: Self.settings(slapd, ["user_filter": "(uid=nobody-at-all)"])).status == 200)
            let empty = try await server.admin("POST", Self.base + "/sync")
            #expect(empty.status == 409)
            #expect(empty.errorDescription?.contains("would disable all 4 users") == true)
        }
    }

    @Test("paging reads every user past the server's size limit")
    func paging() async throws {
        guard let slapd = try await SlapdHarness.startIfAvailable(bulkUsers: DirectoryFixture.bulkCount) else { return }
        defer { slapd.shutdown() }
        try await TestServer.with(.sqlite) { server in
            let settings = Self.settings(slapd, [
                "user_base_dn": DirectoryFixture.bulk, "page_size": 400,
                "groups": ["enabled": false] as [String: any Sendable],
            ])
            #expect(try await server.admin("PUT", Self.base, json: settings).status == 201)
            let synced = try await server.admin("POST", Self.base + "/sync")
            #expect(synced.status == 200, "\(synced.errorDescription ?? "")")
            #expect((synced["users_created"] as? [String])?.count == DirectoryFixture.bulkCount)
            let counts = try await SQLUserRepository().count(
                tenantID: try await server.defaultTenantID(), on: server.database)
            #expect(counts.active == DirectoryFixture.bulkCount)
        }
    }

    @Test("a local user of the same name is adopted; bad settings get a precise 400")
    func adoptionAndSettings() async throws {
        guard let slapd = try await SlapdHarness.startIfAvailable() else { return }
        defer { slapd.shutdown() }
        try await TestServer.with(.sqlite) { server in
            let local = try await server.createUser("dave")
            let refusals: [([String: any Sendable], String)] = [
                (["kind": "novell"], "kind"),
                (["servers": [] as [String]], "servers"),
                (["servers": ["ldap://dc.example.com"]], "servers"),
                (["security": "plain", "servers": ["ldap://dc.example.com"]], "security"),
                (["user_base_dn": "not a dn"], "user_base_dn"),
                (["user_filter": "uid=*"], "user_filter"),
                (["page_size": 0], "page_size"),
                (["sync_interval_minutes": 2], "sync_interval_minutes"),
                (["ca_certificate": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"], "ca_certificate"),
                (["attributes": ["username": "u(id"] as [String: any Sendable]], "attributes.username"),
                (["bind_password": ""], "bind_password"),
            ]
            for (changes, field) in refusals {
                let answer = try await server.admin("PUT", Self.base, json: Self.settings(slapd, changes))
                #expect(answer.status == 400, "\(changes)")
                #expect(answer.errorDescription?.contains(field) == true, "\(answer.errorDescription ?? "")")
            }
            #expect(try await server.admin("GET", Self.base).status == 404)

            #expect(try await server.admin("PUT", Self.base, json: Self.settings(slapd)).status == 201)
            let tested = try await server.admin("POST", Self.base + "/test")
            #expect(tested.status == 200, "\(tested.errorDescription ?? "")")
            #expect(tested["users_found"] as? Int == 4)
            let synced = try await server.admin("POST", Self.base + "/sync")
            #expect(synced["users_adopted"] as? [String] == ["dave"])
            let dave = try await Self.users(server)["dave"]
            #expect(dave?["id"] as? String == local)
            #expect(dave?["source"] as? String == "directory")

            // Without bind_password the stored one is kept; a wrong one fails the test precisely.
            var kept = Self.settings(slapd)
            kept["bind_password"] = nil
            #expect(try await server.admin("PUT", Self.base, json: kept).status == 200)
            #expect(try await server.admin("POST", Self.base + "/test").status == 200)
            // The same CA as a browser's textarea sends it (CRLF, no last newline) is the same CA.
            var asTyped = kept
            asTyped["ca_certificate"] = slapd.caPEM.trimmingCharacters(in: .newlines).replacingOccurrences(of: "\n", with: "\r\n")
            let retyped = try await server.admin("PUT", Self.base, json: asTyped)
            #expect(retyped.status == 200, "\(retyped.errorDescription ?? "")")
            // …but not for other servers: the stored password is never sent anywhere new.
            kept["servers"] = [slapd.ldapsURLForAnotherName]
            let elsewhere = try await server.admin("PUT", Self.base, json: kept)
            #expect(elsewhere.status == 400)
            #expect(elsewhere.errorDescription?.contains("bind_password is invalid: is required again") == true,
                    "\(elsewhere.errorDescription ?? "")")
            #expect(try await server.admin("PUT", Self.base, json: Self.settings(slapd, ["bind_password": "wrong"])).status == 200)
            let refused = try await server.admin("POST", Self.base + "/test")
            #expect(refused.status == 502)
            #expect(refused.errorDescription?.contains("wrong") == false, "a password is never echoed")
            #expect(try await server.admin("DELETE", Self.base).status == 204)
            #expect(try await server.admin("DELETE", Self.base).status == 404)
        }
    }
}

@Suite("Just-in-time users from the directory")
struct DirectoryJustInTimeTests {
    @Test("an unknown username at CIBA and at RADIUS is created from the directory; one it lacks is not, and is asked once",
          arguments: Engine.available)
    func justInTime(engine: Engine) async throws {
        guard let slapd = try await SlapdHarness.startIfAvailable(), RADClient.executable != nil else { return }
        defer { slapd.shutdown() }
        try await TestServer.with(engine, configure: { $0.radiusPort = 0 }) { server in
            #expect(try await server.admin("PUT", DirectorySyncTests.base, json: DirectorySyncTests.settings(slapd)).status == 201)
            let client = try await server.createClient()
            // Carol has no device yet: the request fails as for any user without one, but she now exists.
            let carol = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "carol")])
            #expect(carol.status == 403 && carol.error != "unknown_user_id", "\(carol.error ?? "")")
            var users = try await DirectorySyncTests.users(server)
            #expect(users["carol"]?["source"] as? String == "directory")
            #expect(users["carol"]?["display_name"] as? String == "Carol Lučić")
            // A name the directory lacks creates nothing, and the same again within a minute is
            // answered without asking the directory (it is down now, and the answer is the same).
            let nobody = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "nobody")])
            #expect(nobody.error == "unknown_user_id")
            #expect(try await DirectorySyncTests.users(server)["nobody"] == nil)

            // At RADIUS: alice logs in through the VPN before anyone created her.
            _ = try await server.createRADIUSClient()
            let radius = RADClient(port: try await server.radiusPort(), secret: RADIUSServerTests.secret)
            let reply = try #require(try await radius.send(RADClient.login("alice", password: "push")))
            #expect(reply.code == "Access-Reject", "alice has no device yet")
            users = try await DirectorySyncTests.users(server)
            #expect(users["alice"]?["source"] as? String == "directory")
            #expect((users["alice"]?["source_id"] as? String)?.count == 36, "her entryUUID")

            // Without just-in-time, an unknown name stays unknown.
            #expect(try await server.admin("PUT", DirectorySyncTests.base,
                                           json: DirectorySyncTests.settings(slapd, ["just_in_time": false])).status == 200)
            _ = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "dave")])
            #expect(try await DirectorySyncTests.users(server)["dave"] == nil)
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?action=user.created")
            let actors = (audit["items"] as? [[String: any Sendable]] ?? []).compactMap { $0["actor"] as? String }
            #expect(actors.filter { $0 == "directory-jit" }.count == 2, "\(actors)")
        }
    }
}

extension DirectoryJustInTimeTests {
    @Test("an unknown username at the hosted sign-in is created from the directory, and asked for as any user once enrolled")
    func justInTimeSignIn() async throws {
        guard let slapd = try await SlapdHarness.startIfAvailable() else { return }
        defer { slapd.shutdown() }
        try await TestServer.with(.sqlite) { server in
            #expect(try await server.admin("PUT", DirectorySyncTests.base, json: DirectorySyncTests.settings(slapd)).status == 201)
            let client = try await server.createCodeFlowClient()
            let browser = PageVisitor(server)
            let page = try await browser.get("/authorize" + TestServer.authorizationQuery(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
            let attempt = try #require(page.hidden("attempt"))
            let outcome = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", "bob")])
            #expect(outcome.text.contains("No phone to ask"), "bob has no device yet: \(outcome.text.prefix(300))")
            let bob = try #require(try await DirectorySyncTests.users(server)["bob"])
            #expect(bob["source"] as? String == "directory")
            let bobID = try #require(bob["id"] as? String)
            // Once enrolled, the same sign-in reaches his phone.
            let phone = try await server.enrollDevice(for: bobID, username: "bob", name: "bob's phone")
            let waiting = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", "bob")])
            #expect(waiting.text.contains("Approve on your phone"), "\(waiting.text.prefix(300))")
            #expect(try await phone.kit.pendingRequests().count == 1)
        }
    }
}

extension SlapdHarness {
    /// A started slapd, or nil when slapd is not installed (`available` says so once).
    static func startIfAvailable(bulkUsers: Int = 0) async throws -> SlapdHarness? {
        guard available else { return nil }
        return try await start(bulkUsers: bulkUsers)
    }
}

extension TestServer {
    /// The default tenant's id.
    func defaultTenantID() async throws -> String {
        try #require(try await SQLTenantRepository().find(slug: "default", on: database)).id
    }
}
