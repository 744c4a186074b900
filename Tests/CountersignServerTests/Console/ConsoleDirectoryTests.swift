import Foundation
import Testing
@testable import CountersignServer

/// The console's directory page, driven in memory against a real directory (`SlapdHarness`):
/// every action is the administration API's `…/directory` call with the session's key, and a
/// refused setting is shown beside its field.
@Suite("Console: directory")
struct ConsoleDirectoryTests {
    static let api = "/admin/v1/tenants/default/directory"

    /// The form as an administrator fills it for `slapd`: OpenLDAP over ldaps with the test CA.
    static func settings(_ slapd: SlapdHarness, _ changes: [String: String] = [:]) -> [(String, String)] {
        var fields: [(String, String)] = [
            ("kind", "openldap"), ("servers", slapd.ldapsURL), ("security", "ldaps"), ("ca_certificate", slapd.caPEM),
            ("bind_dn", DirectoryFixture.serviceDN), ("bind_password", DirectoryFixture.servicePassword),
            ("user_base_dn", DirectoryFixture.people), ("user_filter", ""), ("username_attribute", "uid"),
            ("display_name_attribute", "displayName"), ("email_attribute", "mail"), ("id_attribute", "entryUUID"),
            ("member_of_attribute", "memberOf"), ("groups_enabled", "yes"), ("groups_nested", "yes"),
            ("group_base_dn", DirectoryFixture.groups), ("group_filter", ""), ("group_name_attribute", "cn"),
            ("group_member_attribute", "member"), ("group_membership", "member"), ("page_size", "500"),
            ("sync_interval_minutes", "0"), ("connect_timeout_seconds", "5"), ("operation_timeout_seconds", "30"),
            ("just_in_time", "yes"),
        ]
        for (name, value) in changes {
            fields.removeAll { $0.0 == name }
            fields.append((name, value))
        }
        return fields
    }

    @Test("A tenant without a directory sees the page in the navigation with the first kind's defaults filled in")
    func emptyPage() async throws {
        try await ConsoleTests.signedIn { bench in
            let page = try await bench.browser.get("/console/directory")
            #expect(page.status == 200, "\(page.text.suffix(2000))")
            #expect(page.text.contains(#"href="/console/directory" aria-current="page""#), "in the navigation")
            #expect(page.text.contains(#"id="no-directory""#) && !page.text.contains(#"id="sync-now""#))
            #expect(page.text.contains(#"<option value="active_directory" selected>"#))
            #expect(page.text.contains(#"id="username_attribute" name="username_attribute" type="text" autocomplete="off" class="mono" value="sAMAccountName""#))
            #expect(page.text.contains(#"data-default-openldap="(objectClass=inetOrgPerson)""#), "the script's defaults")
            #expect(page.text.contains(#"<script src="/assets/console-directory.js" defer></script>"#))
            let script = try await bench.browser.get("/assets/console-directory.js")
            #expect(script.status == 200 && script.text.contains("data-default-"))
        }
    }

    @Test("A refused setting is shown beside its field with the form as typed, the password not put back, and nothing stored")
    func refusedSettingBesideItsField() async throws {
        try await ConsoleTests.signedIn { bench in
            let refused = try await bench.post("/console/directory", [
                ("kind", "openldap"), ("servers", "ldaps://ldap.example.test"), ("security", "ldaps"),
                ("bind_dn", DirectoryFixture.serviceDN), ("bind_password", "typed-service-secret"),
                ("user_base_dn", DirectoryFixture.people), ("group_filter", "objectClass=groupOfNames"), ("group_membership", "member"),
            ])
            #expect(refused.status == 400, "\(refused.text.suffix(2000))")
            #expect(refused.text.contains(#"id="group_filter-error""#), "\(refused.text.suffix(4000))")
            #expect(refused.text.contains(#"value="objectClass=groupOfNames""#), "the form as typed")
            #expect(refused.text.contains(">ldaps://ldap.example.test</textarea>"))
            #expect(!refused.text.contains("typed-service-secret"), "the password is not put back")
            #expect(try await bench.server.admin("GET", Self.api).status == 404, "nothing stored")

            let notANumber = try await bench.post("/console/directory", [
                ("kind", "openldap"), ("servers", "ldaps://ldap.example.test"), ("security", "ldaps"),
                ("bind_dn", DirectoryFixture.serviceDN), ("bind_password", "typed-service-secret"),
                ("user_base_dn", DirectoryFixture.people), ("page_size", "many"),
            ])
            #expect(notANumber.status == 400 && notANumber.text.contains(#"id="page-size-error""#), "\(notANumber.text.suffix(4000))")
            #expect(notANumber.text.contains(#"value="many""#))

            let plain = try await bench.post("/console/directory", [
                ("kind", "openldap"), ("servers", "ldap://ldap.example.test"), ("security", "plain"),
                ("bind_dn", DirectoryFixture.serviceDN), ("bind_password", "typed-service-secret"),
                ("user_base_dn", DirectoryFixture.people),
            ])
            #expect(plain.status == 400 && plain.text.contains(#"id="security-error""#), "\(plain.text.suffix(4000))")
            #expect(plain.text.contains("only when every server is on this host"))
            #expect(try await bench.server.admin("GET", Self.api).status == 404, "nothing stored")
        }
    }

    @Test("Save against slapd, test the connection, preview (nothing written), sync, see the last sync; an empty password keeps the stored one; remove after confirming",
          .enabled(if: SlapdHarness.available))
    func saveTestPreviewSyncRemove() async throws {
        let slapd = try await SlapdHarness.start()
        defer { slapd.shutdown() }
        try await ConsoleTests.signedIn { bench in
            let saved = try await bench.post("/console/directory", Self.settings(slapd))
            #expect(saved.status == 200 && saved.text.contains(#"id="notice""#), "\(saved.text.suffix(4000))")
            #expect(!saved.text.contains(DirectoryFixture.servicePassword))
            #expect(saved.text.contains(#"id="no-sync""#) && saved.text.contains(#"id="sync-now""#))
            let stored = try await bench.server.admin("GET", Self.api)
            #expect(stored["kind"] as? String == "openldap" && stored["servers"] as? [String] == [slapd.ldapsURL])
            #expect(stored["user_filter"] as? String == "(objectClass=inetOrgPerson)", "an empty filter is the kind's")
            #expect(stored["sync_interval_minutes"] as? Int == 0)

            let tested = try await bench.post("/console/directory/test", [])
            #expect(tested.status == 200 && tested.text.contains(#"id="test-result""#), "\(tested.text.suffix(3000))")
            #expect(tested.text.contains("the user search found 4 users"))
            #expect(tested.text.contains("alice") && tested.text.contains("dave"))

            let preview = try await bench.post("/console/directory/preview", [])
            #expect(preview.status == 200 && preview.text.contains(#"id="preview-result""#), "\(preview.text.suffix(3000))")
            #expect(preview.text.contains("Users to create") && preview.text.contains("Groups to create"))
            let before = try await bench.server.admin("GET", "/admin/v1/tenants/default/users?limit=100")["items"] as? [Any]
            #expect(before?.count == 1, "a preview writes nothing: only the administrator")

            let synced = try await bench.post("/console/directory/sync", [])
            #expect(synced.status == 200 && synced.text.contains(#"id="sync-result""#), "\(synced.text.suffix(3000))")
            #expect(synced.text.contains("Users created") && synced.text.contains("carol"))
            #expect(synced.text.contains(#"id="last-sync-counts">4 users found: 4 created"#), "\(synced.text.suffix(3000))")
            let users = try await bench.server.admin("GET", "/admin/v1/tenants/default/users?limit=100")["items"] as? [[String: Any]]
            #expect(Set((users ?? []).compactMap { $0["username"] as? String }) == ["root", "alice", "bob", "carol", "dave"])

            // Saved again without a password: the stored one still binds.
            let resaved = try await bench.post("/console/directory", Self.settings(slapd, ["bind_password": "", "page_size": "100"]))
            #expect(resaved.status == 200, "\(resaved.text.suffix(3000))")
            #expect(try await bench.server.admin("GET", Self.api)["page_size"] as? Int == 100)
            #expect(try await bench.post("/console/directory/test", []).status == 200, "the stored password was kept")

            let unconfirmed = try await bench.post("/console/directory/delete", [])
            #expect(unconfirmed.status == 400 && unconfirmed.text.contains("Tick the box to confirm"))
            #expect(try await bench.server.admin("GET", Self.api).status == 200)
            let removed = try await bench.post("/console/directory/delete", [("confirm", "yes")])
            #expect(removed.status == 303 && removed.header("Location") == "/console/directory")
            #expect(try await bench.server.admin("GET", Self.api).status == 404)
            let audit = try await bench.browser.get("/console/audit?action=directory.synced")
            #expect(audit.text.contains(#"class="target" href="/console/directory""#), "the audit links to the page")
        }
    }

    @Test("A directory that cannot be reached: the test and the sync say why on a 502 page, and the failed sync is the last sync's record",
          .enabled(if: SlapdHarness.available))
    func unreachableDirectory() async throws {
        let slapd = try await SlapdHarness.start()
        defer { slapd.shutdown() }
        try await ConsoleTests.signedIn { bench in
            #expect(try await bench.post("/console/directory", Self.settings(slapd)).status == 200)
            slapd.stop()
            let tested = try await bench.post("/console/directory/test", [])
            #expect(tested.status == 502 && tested.text.contains(#"id="directory-error""#), "\(tested.text.suffix(3000))")
            #expect(tested.text.contains("Nothing was changed"))
            let synced = try await bench.post("/console/directory/sync", [])
            #expect(synced.status == 502)
            #expect(synced.text.contains(#"id="last-sync-error""#), "\(synced.text.suffix(3000))")
        }
    }
}
