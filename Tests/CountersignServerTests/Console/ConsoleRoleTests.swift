import Foundation
import Testing
@testable import CountersignServer

/// The user page shows the user's console role and changes it, through the administration API
/// with the session's key, as every console action does.
@Suite("Console: a user's console role")
struct ConsoleRoleTests {
    @Test("The user page says a user has no console access, grants the tenant administrator role, and the API and the audit show it")
    func grantingARoleOnTheUserPage() async throws {
        try await ConsoleTests.signedIn(role: "system-admin") { bench in
            let carol = try await bench.server.createUser("carol")
            let page = try await bench.browser.get("/console/users/\(carol)")
            #expect(page.text.contains("carol cannot sign in to the console."), "\(page.text)")
            #expect(page.text.contains(#"<option value="" selected>No console access</option>"#))

            let granted = try await bench.post("/console/users/\(carol)/console-role", [("role", "tenant-admin")])
            #expect(granted.status == 200)
            #expect(granted.text.contains("carol is now a tenant administrator of the console."))
            #expect(granted.text.contains("carol is a <strong>tenant administrator</strong> of the console, since"))
            #expect(granted.text.contains(#"<option value="tenant-admin" selected>Tenant administrator</option>"#))
            let role = try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(carol)/console-role")
            #expect(role["role"] as? String == "tenant-admin")
            let audit = try await bench.server.admin(
                "GET", "/admin/v1/tenants/default/audit?action=user.console_role_granted&user_id=\(carol)")
            let event = try #require((audit["items"] as? [[String: any Sendable]])?.first)
            #expect(event["actor_name"] as? String == "Console session of root", "granted with the session's key")
        }
    }

    @Test("Changing the role to system administrator, then to no console access, takes effect in the API")
    func changingAndRemovingARole() async throws {
        try await ConsoleTests.signedIn(role: "system-admin") { bench in
            let carol = try await bench.server.createUser("carol")
            _ = try await bench.post("/console/users/\(carol)/console-role", [("role", "tenant-admin")])
            let changed = try await bench.post("/console/users/\(carol)/console-role", [("role", "system-admin")])
            #expect(changed.status == 200 && changed.text.contains("carol is now a system administrator of the console."))
            let role = try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(carol)/console-role")
            #expect(role["role"] as? String == "system-admin")

            let removed = try await bench.post("/console/users/\(carol)/console-role", [("role", "")])
            #expect(removed.status == 200 && removed.text.contains("carol has no console access."))
            #expect(removed.text.contains("carol cannot sign in to the console."))
            #expect(try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(carol)/console-role").status == 404)
        }
    }

    @Test("A tenant administrator cannot make anyone a system administrator: the API's refusal is shown beside the field, the choice kept, nothing changed")
    func grantingMoreThanTheSessionHoldsIsRefusedBesideTheField() async throws {
        try await ConsoleTests.signedIn(role: "tenant-admin") { bench in
            let carol = try await bench.server.createUser("carol")
            let refused = try await bench.post("/console/users/\(carol)/console-role", [("role", "system-admin")])
            #expect(refused.status == 403)
            #expect(refused.text.contains(#"<p class="field-error" id="role-error">A key can only grant rights it holds itself; it lacks tenants:manage.</p>"#),
                    "\(refused.text)")
            #expect(refused.text.contains(#"<option value="system-admin" selected>System administrator</option>"#))
            #expect(refused.text.contains("carol cannot sign in to the console."))
            #expect(try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(carol)/console-role").status == 404)
        }
    }

    @Test("A disabled user is not given a role: the API's conflict is shown beside the field")
    func disabledUserGetsNoRole() async throws {
        try await ConsoleTests.signedIn { bench in
            let carol = try await bench.server.createUser("carol")
            #expect(try await bench.server.admin(
                "PATCH", "/admin/v1/tenants/default/users/\(carol)", json: ["status": "disabled"]).status == 200)
            let refused = try await bench.post("/console/users/\(carol)/console-role", [("role", "tenant-admin")])
            #expect(refused.status == 409)
            #expect(refused.text.contains(#"id="role-error""#) && refused.text.contains("is not active"), "\(refused.text)")
        }
    }

    @Test("Another tenant's console offers no system administrator role")
    func otherTenantsOfferNoSystemRole() async throws {
        try await ConsoleTests.signedIn(tenant: "acme") { bench in
            let page = try await bench.browser.get("/t/acme/console/users/\(bench.admin.userID)")
            #expect(page.text.contains("root is a <strong>tenant administrator</strong> of the console"), "\(page.text)")
            #expect(!page.text.contains(#"value="system-admin""#))
        }
    }

    @Test("The role form without the session's CSRF token is refused and changes nothing")
    func roleFormNeedsTheCSRFToken() async throws {
        try await ConsoleTests.signedIn { bench in
            let carol = try await bench.server.createUser("carol")
            let forged = try await bench.browser.post("/console/users/\(carol)/console-role", [("role", "tenant-admin")])
            #expect(forged.status == 403)
            #expect(try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(carol)/console-role").status == 404)
        }
    }
}
