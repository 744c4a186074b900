import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// Groups where policies select users: a client's and a RADIUS client's `allowed_groups`, a
/// RADIUS client's `group_reply_attributes` (with radclient), and the tenant's
/// `group_minimum_acr`; groups named by name or id and kept by id.
@Suite("Groups in policies")
struct GroupPolicyTests {
    /// Creates the group and puts the users in it; its id.
    static func group(_ server: TestServer, _ name: String, members: [String]) async throws -> String {
        let created = try await server.admin("POST", "/admin/v1/tenants/default/groups", json: ["name": name])
        #expect(created.status == 201, "\(created.errorDescription ?? "")")
        let id = try #require(created["id"] as? String)
        for member in members {
            let added = try await server.admin("PUT", "/admin/v1/tenants/default/groups/\(id)/members/\(member)")
            #expect(added.status == 204 || added.status == 200, "\(added.errorDescription ?? "")")
        }
        return id
    }

    @Test("RADIUS: only members of the allowed groups log in, each group's members get its attributes; unknown groups are a 400",
          arguments: Engine.available)
    func radius(engine: Engine) async throws {
        guard RADClient.executable != nil else { return }
        try await TestServer.with(engine, configure: { $0.radiusPort = 0 }) { server in
            let alice = try await server.enrolledUser("alice")
            let bob = try await server.enrolledUser("bob")
            let staff = try await Self.group(server, "vpn-staff", members: [alice.userID])
            _ = try await Self.group(server, "contractors", members: [])

            let unknown = try await server.admin("POST", "/admin/v1/tenants/default/radius-clients", json: [
                "name": "VPN", "networks": ["127.0.0.1/32"], "allowed_groups": ["nobody-group"]])
            #expect(unknown.status == 400 && unknown.errorDescription?.contains("names no group of the tenant: nobody-group") == true,
                    "\(unknown.errorDescription ?? "")")

            let id = try await server.createRADIUSClient(extra: [
                "allowed_groups": ["vpn-staff", "contractors"],
                "group_reply_attributes": [
                    ["group": "vpn-staff", "attributes": [["name": "Filter-Id", "value": "staff"]]],
                    ["group": "contractors", "attributes": [["name": "Filter-Id", "value": "contractors"]]],
                ] as [[String: any Sendable]],
            ])
            let shown = try await server.admin("GET", "/admin/v1/tenants/default/radius-clients/\(id)")
            #expect(shown["allowed_groups"] as? [String] == [staff, try #require(
                try await SQLGroupRepository().find(name: "contractors", tenantID: try await server.defaultTenantID(),
                                                    on: server.database)?.id)], "kept by id")

            let radius = RADClient(port: try await server.radiusPort(), secret: RADIUSServerTests.secret)
            let refused = try #require(try await radius.send(RADClient.login("bob", password: "push")))
            #expect(refused.code == "Access-Reject" && refused.replyMessage == "Unknown user, or the user may not log in.")
            #expect(try await bob.kit.pendingRequests().isEmpty)

            async let answer = radius.send(RADClient.login("alice", password: "push"))
            _ = try await alice.kit.approve(try await RADIUSServerTests.pending(alice.kit))
            let accepted = try #require(try await answer)
            #expect(accepted.code == "Access-Accept")
            #expect(accepted.all("Filter-Id") == ["staff"], "\(accepted.attributes)")

            // A renamed group keeps its place in the policy.
            let renamed = try await server.admin("PATCH", "/admin/v1/tenants/default/groups/\(staff)", json: ["name": "vpn-employees"])
            #expect(renamed.status == 200)
            let again = try await server.admin("GET", "/admin/v1/tenants/default/radius-clients/\(id)")
            #expect((again["allowed_groups"] as? [String])?.first == staff)
            // A group deleted since stays where it was named (admitting nobody), and what GET
            // shows can be sent back as it is.
            let contractors = try #require((again["allowed_groups"] as? [String])?.last)
            #expect(try await server.admin("DELETE", "/admin/v1/tenants/default/groups/\(contractors)").status == 204)
            let resent = try await server.admin("PATCH", "/admin/v1/tenants/default/radius-clients/\(id)", json: [
                "allowed_groups": again["allowed_groups"] as? [String] ?? [],
                "group_reply_attributes": again["group_reply_attributes"] as? [[String: any Sendable]] ?? [],
            ])
            #expect(resent.status == 200, "\(resent.errorDescription ?? "")")
        }
    }

    @Test("a client for some groups: CIBA for anyone else is access_denied, the hosted sign-in treats them as unknown and pushes nothing",
          arguments: Engine.available)
    func client(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let alice = try await server.enrolledUser("alice")
            let bob = try await server.enrolledUser("bob")
            _ = try await Self.group(server, "payments", members: [alice.userID])
            let client = try await server.createCodeFlowClient(extra: ["allowed_groups": ["payments"]])
            let ciba = TestClient(id: client.id, secret: try #require(client.secret))
            let denied = try await server.bcAuthorize(ciba, [("scope", "openid"), ("login_hint", "bob")])
            #expect(denied.status == 403 && denied.error == "access_denied", "\(denied.error ?? "") \(denied.errorDescription ?? "")")
            let allowed = try await server.bcAuthorize(ciba, [("scope", "openid"), ("login_hint", "alice")])
            #expect(allowed.status == 200, "\(allowed.errorDescription ?? "")")

            let browser = PageVisitor(server)
            let page = try await browser.get("/authorize" + TestServer.authorizationQuery(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
            let attempt = try #require(page.hidden("attempt"))
            let outcome = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", "bob")])
            #expect(outcome.text.contains("No phone to ask"), "\(outcome.text.prefix(400))")
            #expect(try await bob.kit.pendingRequests().isEmpty)
            let back = try await server.signIn(browser, client: client, user: alice,
                                               challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            #expect(back.status == 303 && back.redirectParameters["code"] != nil)
        }
    }

    @Test("a group's floor raises what its members' requests require, and only theirs; a floor no phone reaches is a 400")
    func floor() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let adaID = try await server.createUser("ada")
            let ada = try await server.enrollFactorDevice(for: adaID, pin: true)
            let bobID = try await server.createUser("bob")
            let bob = try await server.enrollFactorDevice(for: bobID, pin: true)
            _ = try await Self.group(server, "admins", members: [adaID])
            let set = try await server.admin("PUT", "/admin/v1/tenants/default/authentication-policy", json: [
                "user_requests_per_minute": 0,
                "group_minimum_acr": [["group": "admins", "minimum_acr": "urn:countersign:acr:pin"]] as [[String: any Sendable]],
            ])
            #expect(set.status == 200, "\(set.errorDescription ?? "")")
            let floors = try #require(set["group_minimum_acr"] as? [[String: any Sendable]])
            #expect((floors.first?["group"] as? String)?.hasPrefix("grp_") == true, "kept by id")

            _ = try await server.startApproval(client, user: "ada", extra: [])
            #expect(try await ada.newest().details.verification?.factor == .pin)
            _ = try await server.startApproval(client, user: "bob", extra: [])
            #expect(try await bob.newest().details.verification?.factor == .confirm)
            // Asking for more than the floor still gets more.
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:biometric")])
            #expect(try await ada.newest().details.verification?.factor == .biometric)

            // The policy read back can be put back after its group was deleted.
            let admins = try #require(floors.first?["group"] as? String)
            #expect(try await server.admin("DELETE", "/admin/v1/tenants/default/groups/\(admins)").status == 204)
            let shown = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            let putBack = try await server.admin("PUT", "/admin/v1/tenants/default/authentication-policy", json: [
                "user_requests_per_minute": 0,
                "group_minimum_acr": shown["group_minimum_acr"] as? [[String: any Sendable]] ?? [],
            ])
            #expect(putBack.status == 200, "\(putBack.errorDescription ?? "")")
            _ = try await Self.group(server, "admins", members: [adaID])

            let unreachable = try await server.admin("PUT", "/admin/v1/tenants/default/authentication-policy", json: [
                "disabled_factors": ["custom"],
                "group_minimum_acr": [["group": "admins", "minimum_acr": "urn:countersign:acr:custom"]] as [[String: any Sendable]],
            ])
            #expect(unreachable.status == 400 && unreachable.errorDescription?.contains("group_minimum_acr") == true,
                    "\(unreachable.errorDescription ?? "")")
            let unknownGroup = try await server.admin("PUT", "/admin/v1/tenants/default/authentication-policy", json: [
                "group_minimum_acr": [["group": "nobody", "minimum_acr": "urn:countersign:acr:pin"]] as [[String: any Sendable]],
            ])
            #expect(unknownGroup.status == 400 && unknownGroup.errorDescription?.contains("nobody") == true)
        }
    }
}
