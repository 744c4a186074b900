import Foundation
import Testing
@testable import CountersignServer

/// The SCIM server end to end: an independent SCIM checker (scim2-tester, from pip) against the
/// running server, then requests shaped as Entra ID and Okta send them, on both engines.
@Suite("SCIM 2.0 server")
struct SCIMServerTests {
    /// python3 with scim2-tester, or nil (and a line saying the checker test is skipped).
    static let checker: URL? = {
        guard let python = ChildProcess.find("python3"),
              (try? ChildProcess.runBlocking(python, ["-c", "import scim2_tester, scim2_client, httpx2"])) != nil
        else {
            FileHandle.standardError.write(Data(
                "SCIMServerTests: SKIPPED the scim2-tester check: python3 with scim2-tester[httpx2] is not installed\n".utf8))
            return nil
        }
        return python
    }()

    /// A tenant key holding `scim` alone, as an identity provider is given.
    static func provisioningKey(_ server: TestServer, tenant: String = "default") async throws -> String {
        let created = try await server.admin(
            "POST", "/admin/v1/tenants/\(tenant)/admin-keys", json: ["name": "Entra ID provisioning", "rights": ["scim"]])
        #expect(created.status == 201, "\(created.errorDescription ?? "")")
        return try #require(created["secret"] as? String)
    }

    /// A SCIM call: the body as SCIM's media type, the answer with its JSON.
    static func scim(_ server: TestServer, _ method: String, _ path: String, key: String?, body: String? = nil,
                     headers: [String: String] = [:]) async throws -> TestServer.Answer {
        var all = headers
        if body != nil { all["Content-Type"] = "application/scim+json" }
        return try await server.call(method, "/scim/v2" + path, key: key, body: body.map { Data($0.utf8) }, headers: all)
    }

    @Test("scim2-tester finds nothing wrong", .enabled(if: checker != nil), arguments: Engine.available)
    func independentChecker(engine: Engine) async throws {
        let python = try #require(Self.checker)
        try await TestServer.with(engine) { server in
            let key = try await Self.provisioningKey(server)
            let result = try await ChildProcess.spawned(python, ["-c", """
                import sys
                from httpx2 import Client
                from scim2_client.engines.httpx2 import SyncSCIMClient
                from scim2_tester import Status, check_server
                http = Client(base_url=sys.argv[1], headers={"Authorization": "Bearer " + sys.argv[2]})
                results = check_server(SyncSCIMClient(http))
                bad = [r for r in results if r.status in (Status.ERROR, Status.CRITICAL)]
                for r in results:
                    print(r.status.name, r.resource_type or "", r.title, "-", r.reason or "")
                print("checks:", len(results), "failed:", len(bad))
                sys.exit(1 if bad or not results else 0)
                """, server.base + "/scim/v2", key])
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("failed: 0"), "\(result.output)")
            print(result.output.split(separator: "\n").suffix(3).joined(separator: "\n"))
        }
    }

    @Test("Entra ID's requests: create, find by userName, disable with \"False\", work e-mail, group members added and removed, delete",
          arguments: Engine.available)
    func entraID(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let key = try await Self.provisioningKey(server)
            // Entra ID first asks whether the user exists.
            let search = try await Self.scim(server, "GET", "/Users?filter=userName+eq+%22Test_User_ab6490ee%40example.com%22", key: key)
            #expect(search.status == 200)
            #expect(search.header("Content-Type")?.hasPrefix("application/scim+json") == true)
            #expect(search["totalResults"] as? Int == 0)
            let created = try await Self.scim(server, "POST", "/Users", key: key, body: """
                {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
                 "externalId":"0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef","userName":"Test_User_ab6490ee@example.com","active":true,
                 "emails":[{"primary":true,"type":"work","value":"Test_User_fd0ea19b@example.com"}],
                 "meta":{"resourceType":"User"},"name":{"formatted":"givenName familyName","familyName":"familyName","givenName":"givenName"},
                 "roles":[]}
                """)
            #expect(created.status == 201, "\(created.json ?? [:])")
            let id = try #require(created["id"] as? String)
            #expect(created.header("ETag")?.hasPrefix("W/\"") == true)
            let found = try await Self.scim(server, "GET", "/Users?filter=userName+eq+%22test_user_AB6490EE%40example.com%22", key: key)
            #expect(found["totalResults"] as? Int == 1, "userName matches in any case")
            var user = try await server.admin("GET", "/admin/v1/tenants/default/users/\(id)")
            #expect(user["source"] as? String == "scim")
            #expect(user["email"] as? String == "Test_User_fd0ea19b@example.com")
            #expect(user["display_name"] as? String == "givenName familyName")
            #expect(user["external_id"] as? String == "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef")

            let patched = try await Self.scim(server, "PATCH", "/Users/\(id)", key: key, body: """
                {"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
                 {"op":"Replace","path":"emails[type eq \\"work\\"].value","value":"updatedEmail@example.com"},
                 {"op":"Replace","path":"active","value":"False"}]}
                """)
            #expect(patched.status == 200, "\(patched.json ?? [:])")
            #expect(patched["active"] as? Bool == false)
            user = try await server.admin("GET", "/admin/v1/tenants/default/users/\(id)")
            #expect(user["status"] as? String == "disabled" && user["email"] as? String == "updatedEmail@example.com")
            #expect(try await Self.scim(server, "PATCH", "/Users/\(id)", key: key, body: """
                {"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"True"}]}
                """)["active"] as? Bool == true)

            let group = try await Self.scim(server, "POST", "/Groups", key: key, body: """
                {"externalId":"8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159","displayName":"Group1DisplayName",
                 "meta":{"resourceType":"Group"},"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"]}
                """)
            #expect(group.status == 201, "\(group.json ?? [:])")
            let groupID = try #require(group["id"] as? String)
            let added = try await Self.scim(server, "PATCH", "/Groups/\(groupID)", key: key, body: """
                {"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
                 {"op":"Add","path":"members","value":[{"value":"\(id)"}]}]}
                """)
            #expect(added.status == 200, "\(added.json ?? [:])")
            #expect((added["members"] as? [[String: any Sendable]])?.first?["value"] as? String == id)
            let lean = try await Self.scim(server, "GET", "/Groups/\(groupID)?excludedAttributes=members", key: key)
            #expect(lean.status == 200 && lean["members"] == nil)
            let userGroups = try await Self.scim(server, "GET", "/Users/\(id)", key: key)
            #expect((userGroups["groups"] as? [[String: any Sendable]])?.first?["display"] as? String == "Group1DisplayName")
            let removed = try await Self.scim(server, "PATCH", "/Groups/\(groupID)", key: key, body: """
                {"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
                 {"op":"Remove","path":"members[value eq \\"\(id)\\"]"}]}
                """)
            #expect((removed["members"] as? [Any])?.isEmpty ?? true)
            let stranger = try await Self.scim(server, "PATCH", "/Groups/\(groupID)", key: key, body: """
                {"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
                 {"op":"Add","path":"members","value":[{"value":"usr_nobody"}]}]}
                """)
            #expect(stranger.status == 400 && stranger["scimType"] as? String == "invalidValue")

            // Delete: gone for SCIM, kept (disabled) by Countersign; provisioning again brings them back.
            #expect(try await Self.scim(server, "DELETE", "/Users/\(id)", key: key).status == 204)
            let gone = try await Self.scim(server, "GET", "/Users/\(id)", key: key)
            #expect(gone.status == 404)
            #expect(gone["schemas"] as? [String] == ["urn:ietf:params:scim:api:messages:2.0:Error"])
            #expect(gone["status"] as? String == "404")
            user = try await server.admin("GET", "/admin/v1/tenants/default/users/\(id)")
            #expect(user["status"] as? String == "disabled" && user["deprovisioned_at"] != nil)
            let again = try await Self.scim(server, "POST", "/Users", key: key, body: #"{"userName":"Test_User_ab6490ee@example.com"}"#)
            #expect(again.status == 201 && again["id"] as? String == id && again["active"] as? Bool == true)
        }
    }

    @Test("Okta's requests: PUT of the whole user, PATCH with no path, group rename; errors in SCIM's format",
          arguments: Engine.available)
    func okta(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let key = try await Self.provisioningKey(server)
            let created = try await Self.scim(server, "POST", "/Users", key: key, body: """
                {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"isabella@example.com",
                 "name":{"givenName":"Isabella","familyName":"Bonifacio"},"emails":[{"primary":true,"value":"isabella@example.com","type":"work"}],
                 "displayName":"Isabella Bonifacio","locale":"en-US","externalId":"00ujl29u0le5T6Aj10h7","groups":[],"password":"1mz050nq","active":true}
                """)
            #expect(created.status == 201, "\(created.json ?? [:])")
            let id = try #require(created["id"] as? String)
            let etag = try #require(created.header("ETag"))
            // Okta's PUT repeats the user with its changes.
            let replaced = try await Self.scim(server, "PUT", "/Users/\(id)", key: key, body: """
                {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"\(id)","userName":"isabella@example.com",
                 "name":{"givenName":"Isabella","familyName":"Bonifacio-Reyes"},"emails":[{"primary":true,"value":"isabella@example.com","type":"work"}],
                 "displayName":"Isabella Bonifacio-Reyes","active":true}
                """, headers: ["If-Match": etag])
            #expect(replaced.status == 200, "\(replaced.json ?? [:])")
            #expect((replaced["name"] as? [String: any Sendable])?["familyName"] as? String == "Bonifacio-Reyes")
            let stale = try await Self.scim(server, "PUT", "/Users/\(id)", key: key, body: #"{"userName":"isabella@example.com"}"#,
                                            headers: ["If-Match": etag])
            #expect(stale.status == 412)
            let deactivated = try await Self.scim(server, "PATCH", "/Users/\(id)", key: key, body: """
                {"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":false}}]}
                """)
            #expect(deactivated["active"] as? Bool == false)

            let group = try await Self.scim(server, "POST", "/Groups", key: key, body: """
                {"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"Test SCIMv2","members":[{"value":"\(id)","display":"isabella@example.com"}]}
                """)
            let groupID = try #require(group["id"] as? String)
            let renamed = try await Self.scim(server, "PATCH", "/Groups/\(groupID)", key: key, body: """
                {"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"id":"\(groupID)","displayName":"Test SCIMv2 renamed"}}]}
                """)
            #expect(renamed["displayName"] as? String == "Test SCIMv2 renamed")
            #expect((renamed["members"] as? [Any])?.count == 1, "a rename keeps the members")

            // Refusals, each a SCIM error document.
            let twin = try await Self.scim(server, "POST", "/Users", key: key, body: #"{"userName":"isabella@example.com"}"#)
            #expect(twin.status == 409 && twin["scimType"] as? String == "uniqueness")
            let filter = try await Self.scim(server, "GET", "/Users?filter=title+co+%22x%22", key: key)
            #expect(filter.status == 400 && filter["scimType"] as? String == "invalidFilter")
            let syntax = try await Self.scim(server, "POST", "/Users", key: key, body: "{")
            #expect(syntax.status == 400 && syntax["scimType"] as? String == "invalidSyntax")
            let noKey = try await Self.scim(server, "GET", "/Users", key: nil)
            #expect(noKey.status == 401 && noKey["status"] as? String == "401")
            let reader = try await server.admin(
                "POST", "/admin/v1/tenants/default/admin-keys", json: ["name": "reader", "rights": ["users:read"]])
            let wrongRight = try await Self.scim(server, "GET", "/Users", key: try #require(reader["secret"] as? String))
            #expect(wrongRight.status == 403)
            #expect(try await Self.scim(server, "DELETE", "/Schemas", key: key).status == 405)
            #expect(try await Self.scim(server, "GET", "/ServiceProviderConfig", key: nil).status == 200)
        }
    }
}
