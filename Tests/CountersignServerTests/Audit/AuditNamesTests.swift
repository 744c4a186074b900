import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The audit log names who acted and on what as they are called now, read for a page at once.
@Suite("Audit: actors and targets by name")
struct AuditNamesTests {
    @Test("Each event of the API names its actor and target as they are now: a device with its user, a client, an admin key, a user",
          arguments: Engine.available)
    func apiNamesActorsAndTargets(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let carol = try await server.enrolledUser("carol")
            let client = try await server.createClient(name: "Online banking")
            let authReqID = try await server.startApproval(client, user: "carol")
            let pending = try #require(try await carol.kit.pendingRequests().first)
            _ = try await carol.kit.approve(try await carol.kit.details(for: pending))
            #expect(try await server.token(client, authReqID).status == 200)

            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?limit=50")
            let items = try #require(audit["items"] as? [[String: any Sendable]])
            func event(_ action: String) throws -> [String: any Sendable] {
                try #require(items.first { $0["action"] as? String == action }, "no \(action)")
            }
            let approved = try event("approval.approved")
            #expect(approved["actor_name"] as? String == "carol's phone")
            #expect(approved["actor_user_id"] as? String == carol.userID)
            #expect(approved["target_name"] == nil, "a request has no name")
            let exchanged = try event("approval.exchanged")
            #expect(exchanged["actor_name"] as? String == "Online banking")
            let created = try event("user.created")
            #expect(created["target_name"] as? String == "carol")
            #expect((created["actor"] as? String)?.hasPrefix("admin-key:") == true)
            #expect(created["actor_name"] is String, "the admin key that created carol is named")
            let enrolled = try event("device.enrolled")
            #expect(enrolled["target_name"] as? String == "carol's phone")
            #expect(enrolled["target_user_id"] as? String == carol.userID)
        }
    }

    @Test("A record that no longer exists keeps its id and gets no name")
    func deletedRecordsHaveNoName() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("dave")
            #expect(try await server.admin("DELETE", "/admin/v1/tenants/default/users/\(userID)").status == 204)
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?action=user.created")
            let created = try #require((audit["items"] as? [[String: any Sendable]])?.first)
            #expect(created["target_id"] as? String == userID)
            #expect(created["target_name"] == nil)
        }
    }

    @Test("The console's audit log links who acted by name: the user to their page, the phone to its user's page, the client to its page")
    func consoleLinksActorsByName() async throws {
        try await ConsoleTests.signedIn { bench in
            let carol = try await bench.server.enrolledUser("carol")
            let client = try await bench.server.createClient(name: "Online banking")
            let authReqID = try await bench.server.startApproval(client, user: "carol")
            let pending = try #require(try await carol.kit.pendingRequests().first)
            _ = try await carol.kit.approve(try await carol.kit.details(for: pending))
            #expect(try await bench.server.token(client, authReqID).status == 200)

            let page = try await bench.browser.get("/console/audit")
            #expect(page.status == 200)
            #expect(page.text.contains(
                "<a class=\"actor\" href=\"/console/users/\(carol.userID)#device-\(carol.enrollment.deviceID)\" title=\"device:\(carol.enrollment.deviceID)\">carol&#39;s phone</a>"),
                "\(page.text)")
            #expect(page.text.contains("<a class=\"actor\" href=\"/console/clients/\(client.id)\" title=\"client:\(client.id)\">Online banking</a>"))
            #expect(page.text.contains("<a class=\"actor\" href=\"/console/users/\(bench.admin.userID)\" title=\"user:\(bench.admin.userID)\">root</a>"))
            #expect(page.text.contains("Console session of root"), "the session's admin key, by name")
        }
    }
}
