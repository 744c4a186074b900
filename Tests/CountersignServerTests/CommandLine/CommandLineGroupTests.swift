import Foundation
import Testing
@testable import CountersignServer

/// `countersign admin group list|create|show|rename|delete|members|add-member|remove-member` and
/// `countersign admin user groups`, run with the real executable against a listening server, as
/// docs/api.md §23 shows them.
@Suite("The countersign admin group commands")
struct CommandLineGroupTests {
    @Test("create, list, show, rename, add-member, members, user groups, remove-member and delete",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func lifecycle() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            func run(_ arguments: [String]) async throws -> [String: Any]? {
                let run = try await CommandLineTests.run(["admin"] + arguments, environment: environment)
                #expect(run.status == 0, "\(arguments): \(run.output)")
                return run.output.isEmpty ? nil : try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
            }
            let ada = try await server.createUser("ada")

            let created = try #require(try await run(["group", "create", "VPN users", "--external-id", "ext-1"]))
            let id = try #require(created["id"] as? String)
            #expect(created["name"] as? String == "VPN users" && created["source"] as? String == "local")
            #expect(created["external_id"] as? String == "ext-1" && created["member_count"] as? Int == 0)
            _ = try await run(["group", "create", "Sales"])
            let listed = try #require(try await run(["group", "list", "--search", "vpn"]))
            #expect((listed["items"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
            let local = try #require(try await run(["group", "list", "--source", "local", "--limit", "1"]))
            #expect((local["items"] as? [Any])?.count == 1 && local["next_cursor"] as? String == id)
            #expect(try await run(["group", "show", id])?["name"] as? String == "VPN users")
            #expect(try await run(["group", "rename", id, "Remote access"])?["name"] as? String == "Remote access")

            #expect(try await run(["group", "add-member", id, ada]) == nil)
            let members = try #require(try await run(["group", "members", id]))
            #expect((members["items"] as? [[String: Any]])?.map { $0["username"] as? String } == ["ada"])
            let groups = try #require(try await run(["user", "groups", ada]))
            #expect((groups["items"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Remote access"])
            #expect(try await run(["group", "remove-member", id, ada]) == nil)
            let notMember = try await CommandLineTests.run(["admin", "group", "remove-member", id, ada], environment: environment)
            #expect(notMember.status != 0)
            #expect(notMember.output.contains("404 not_found: user \(ada) in group \(id) was not found"), "\(notMember.output)")

            #expect(try await run(["group", "delete", id]) == nil)
            let gone = try await CommandLineTests.run(["admin", "group", "show", id], environment: environment)
            #expect(gone.status != 0)
            #expect(gone.output.contains("404 not_found: group \(id) was not found"), "\(gone.output)")
        }
    }

    @Test("a refusal is printed with the rule broken; a directory's group changed by hand is noted on standard error",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func refusalsAndSyncNotice() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            let bad = try await CommandLineTests.run(["admin", "group", "create", "   "], environment: environment)
            #expect(bad.status != 0)
            #expect(bad.output.contains("400 invalid_request: \(GroupAdminTests.nameRule)"), "\(bad.output)")

            let group = try await GroupAdminTests.directoryGroup("Engineering", on: server)
            let renamed = try await CommandLineTests.run(["admin", "group", "rename", group.id, "Engineering (all)"],
                                                         environment: environment)
            #expect(renamed.status == 0, "\(renamed.output)")
            #expect(renamed.output.contains(
                "note: group \(group.id) is kept by the tenant's directory; its next sync may undo this change"), "\(renamed.output)")
            #expect(renamed.output.contains("\"name\" : \"Engineering (all)\""), "\(renamed.output)")
        }
    }
}
