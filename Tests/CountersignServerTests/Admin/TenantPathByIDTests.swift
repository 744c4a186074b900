import Foundation
import Testing
@testable import CountersignServer

/// Where an administration path takes `{tenant}`, the tenant's id names it as its slug does: a
/// client (schemathesis's stateful phase among them) may use the `id` a creation answered.
@Suite("A tenant named by its id in administration paths")
struct TenantPathByIDTests {
    @Test("GET, a user created and listed, and a rename, by the tenant's id; an unknown id is not found")
    func tenantByID() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"])
            #expect(created.status == 201)
            let id = try #require(created["id"] as? String)
            #expect(id.hasPrefix("ten_"))
            let shown = try await server.admin("GET", "/admin/v1/tenants/\(id)")
            #expect(shown.status == 200 && shown["slug"] as? String == "acme")
            let user = try await server.admin("POST", "/admin/v1/tenants/\(id)/users", json: ["username": "carol"])
            #expect(user.status == 201, "\(user.errorDescription ?? "")")
            let listed = try await server.admin("GET", "/admin/v1/tenants/acme/users")
            #expect((listed["items"] as? [[String: Any]])?.first?["username"] as? String == "carol")
            let renamed = try await server.admin("PATCH", "/admin/v1/tenants/\(id)", json: ["display_name": "Acme Bank"])
            #expect(renamed.status == 200 && renamed["display_name"] as? String == "Acme Bank", "\(renamed.errorDescription ?? "")")
            let unknown = try await server.admin("GET", "/admin/v1/tenants/ten_01unknown/users")
            #expect(unknown.status == 404 && unknown.errorDescription == "tenant ten_01unknown was not found")
        }
    }
}
