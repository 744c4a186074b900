import Foundation
import Testing
@testable import CountersignServer

/// The console's groups, driven in memory: every action is the administration API's `…/groups`
/// call with the session's key, and a refusal is shown beside its field with what was typed.
@Suite("Console: groups")
struct ConsoleGroupTests {
    static let collection = "/admin/v1/tenants/default/groups"

    static func groupID(in text: String) -> String? {
        AccountBench.capture(#"<code id="group-id">([^<]+)</code>"#, in: text)
    }

    @Test("Creating a group: a bad name and a taken one are shown beside the field with the name as typed and nothing stored; the list shows members and source")
    func createAndList() async throws {
        try await ConsoleTests.signedIn { bench in
            let bad = try await bench.post("/console/groups", [("name", "Bank \u{202E}NPV")])
            #expect(bad.status == 400 && bad.text.contains(#"id="name-error""#), "\(bad.text.suffix(3000))")
            #expect(bad.text.contains(#"value="Bank \#u{202E}NPV""#), "the name as typed")
            #expect((try await bench.server.admin("GET", Self.collection)["items"] as? [Any])?.isEmpty == true, "nothing stored")

            let made = try await bench.post("/console/groups", [("name", "VPN users")])
            #expect(made.status == 303, "\(made.text.suffix(3000))")
            let location = try #require(made.header("Location"))
            #expect(location.hasPrefix("/console/groups/grp_"))
            let id = String(location.dropFirst("/console/groups/".count))

            let taken = try await bench.post("/console/groups", [("name", "VPN users")])
            #expect(taken.status == 409 && taken.text.contains(#"<p class="field-error" id="name-error">A group named VPN users already exists in this tenant.</p>"#),
                    "\(taken.text.suffix(3000))")
            #expect(taken.text.contains(#"value="VPN users""#))

            let ada = try await bench.server.createUser("ada")
            #expect(try await bench.server.admin("PUT", "\(Self.collection)/\(id)/members/\(ada)").status == 204)
            let list = try await bench.browser.get("/console/groups")
            #expect(list.status == 200)
            #expect(list.text.contains(#"id="group-\#(id)">VPN users</a>"#) && list.text.contains(#"<td id="group-\#(id)-members">1</td>"#),
                    "\(list.text.suffix(3000))")
            #expect(list.text.contains("<td>local</td>"))
            #expect(list.text.contains(#"href="/console/groups" aria-current="page""#), "in the navigation")
        }
    }

    @Test("A group's members: added by username (an unknown one beside the field, nothing added), listed with links, removed; rename and delete with confirmation")
    func membersRenameDelete() async throws {
        try await ConsoleTests.signedIn { bench in
            let id = try await GroupAdminTests.create("VPN users", on: bench.server)
            let ada = try await bench.server.createUser("ada")
            _ = try await bench.server.createUser("adam")
            let page = "/console/groups/\(id)"

            let unknown = try await bench.post(page + "/members", [("username", "ad")])
            #expect(unknown.status == 404 && unknown.text.contains(#"<p class="field-error" id="username-error">No user of this tenant is named ad.</p>"#),
                    "\(unknown.text.suffix(3000))")
            #expect(unknown.text.contains(#"id="username" name="username" type="text" autocomplete="off" value="ad""#))
            let empty = try await bench.post(page + "/members", [("username", " ")])
            #expect(empty.status == 400 && empty.text.contains(#"id="username-error""#))
            #expect((try await bench.server.admin("GET", "\(Self.collection)/\(id)/members")["items"] as? [Any])?.isEmpty == true)

            let added = try await bench.post(page + "/members", [("username", "ada")])
            #expect(added.status == 200 && added.text.contains("ada is in the group."), "\(added.text.suffix(3000))")
            #expect(added.text.contains(#"<tr id="member-\#(ada)"><td><a href="/console/users/\#(ada)">ada</a></td>"#))
            #expect(added.text.contains(#"<span id="group-member-count">1</span>"#))
            #expect(!added.text.contains(#"id="sync-hint""#), "a local group")
            let members = try await bench.server.admin("GET", "\(Self.collection)/\(id)/members")
            #expect((members["items"] as? [[String: any Sendable]])?.map { $0["username"] as? String } == ["ada"], "ada, not adam")

            let user = try await bench.browser.get("/console/users/\(ada)")
            #expect(user.text.contains(#"<a href="/console/groups/\#(id)" id="group-\#(id)">VPN users</a>"#), "the user's page links the group")

            let badName = try await bench.post(page, [("name", "   ")])
            #expect(badName.status == 400 && badName.text.contains(#"id="name-error""#), "\(badName.text.suffix(3000))")
            let renamed = try await bench.post(page, [("name", "Remote access")])
            #expect(renamed.status == 200 && renamed.text.contains(#"<h1 id="group-heading">Remote access</h1>"#))
            #expect(renamed.text.contains(#"<p class="notice" role="status" id="notice">Renamed.</p>"#))

            let audit = try await bench.browser.get("/console/audit?action=group.created")
            #expect(audit.text.contains(#"class="target" href="/console/groups/\#(id)""#), "the audit links to the group's page")

            let removed = try await bench.post(page + "/members/\(ada)/remove", [])
            #expect(removed.status == 200 && removed.text.contains("Removed from the group.") && removed.text.contains(#"id="no-members""#))
            let again = try await bench.post(page + "/members/\(ada)/remove", [])
            #expect(again.status == 404 && again.text.contains(#"id="action-error""#))

            let unconfirmed = try await bench.post(page + "/delete", [])
            #expect(unconfirmed.status == 400 && unconfirmed.text.contains("Tick the box to confirm"))
            #expect(try await bench.server.admin("GET", "\(Self.collection)/\(id)").status == 200)
            let deleted = try await bench.post(page + "/delete", [("confirm", "yes")])
            #expect(deleted.status == 303 && deleted.header("Location") == "/console/groups")
            #expect(try await bench.server.admin("GET", "\(Self.collection)/\(id)").status == 404)
            #expect(try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(ada)").status == 200, "the user stays")
        }
    }

    @Test("A directory's group can be changed in the console; its page says the next sync may undo it")
    func directoryGroupSaysSyncMayUndo() async throws {
        try await ConsoleTests.signedIn { bench in
            let group = try await GroupAdminTests.directoryGroup("Engineering", on: bench.server)
            _ = try await bench.server.createUser("ada")
            let shown = try await bench.browser.get("/console/groups/\(group.id)")
            #expect(shown.text.contains(#"<span id="group-source">directory</span>"#))
            #expect(shown.text.contains("This group is kept by the tenant&#39;s directory: you may change it here, but its next sync may undo the change."),
                    "\(shown.text.suffix(3000))")
            let added = try await bench.post("/console/groups/\(group.id)/members", [("username", "ada")])
            #expect(added.status == 200)
            #expect(added.text.contains("ada is in the group. Group \(group.id) is kept by the tenant&#39;s directory; its next sync may undo this change."),
                    "\(added.text.suffix(3000))")
        }
    }

    @Test("The user's page shows the e-mail address and source, and sets or removes the address; a bad one beside the field as typed")
    func userEmailAndSource() async throws {
        try await ConsoleTests.signedIn { bench in
            let ada = try await bench.server.createUser("ada")
            let page = try await bench.browser.get("/console/users/\(ada)")
            #expect(page.text.contains(#"<dd id="email">—</dd>"#) && page.text.contains(#"<dd id="source">local</dd>"#))
            #expect(page.text.contains(#"<dd id="groups">none</dd>"#))

            let bad = try await bench.post("/console/users/\(ada)/email", [("email", "ada at example")])
            #expect(bad.status == 400 && bad.text.contains(#"<p class="field-error" id="email-error">Field email is invalid: must be an e-mail address such as ada@example.com (at most 254 characters).</p>"#),
                    "\(bad.text.suffix(3000))")
            #expect(bad.text.contains(#"value="ada at example""#))
            #expect(try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(ada)")["email"] == nil, "nothing stored")

            let set = try await bench.post("/console/users/\(ada)/email", [("email", "ada@example.com")])
            #expect(set.status == 200 && set.text.contains("The e-mail address is set.") && set.text.contains(#"<dd id="email">ada@example.com</dd>"#))
            #expect(try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(ada)")["email"] as? String == "ada@example.com")
            let removed = try await bench.post("/console/users/\(ada)/email", [("email", "")])
            #expect(removed.status == 200 && removed.text.contains("The e-mail address is removed."))
            #expect(try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(ada)")["email"] == nil)
        }
    }
}
