import Foundation
import Testing

/// `countersign admin user console-role` and `admin user list --search`, run with the real
/// executable against a listening server, as the README and docs/api.md §10 show them.
@Suite("The countersign admin user console-role command")
struct CommandLineConsoleRoleTests {
    @Test("console-role --set grants, without an option shows, --remove takes away; list --search finds by username prefix",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func grantShowRemoveAndSearch() async throws {
        try await TestServer.with(.sqlite) { server in
            let userID = try await server.createUser("Root.Admin")
            _ = try await server.createUser("alice")
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            let run = { (arguments: [String]) in
                try await CommandLineTests.run(["admin", "user"] + arguments, environment: environment)
            }
            let granted = try await run(["console-role", userID, "--set", "system-admin"])
            #expect(granted.status == 0 && granted.output.contains("\"role\" : \"system-admin\""), "\(granted.output)")
            let shown = try await run(["console-role", userID])
            #expect(shown.status == 0 && shown.output.contains("system-admin"), "\(shown.output)")
            let both = try await run(["console-role", userID, "--set", "tenant-admin", "--remove"])
            #expect(both.status != 0)
            let removed = try await run(["console-role", userID, "--remove"])
            #expect(removed.status == 0, "\(removed.output)")
            let none = try await run(["console-role", userID])
            #expect(none.status != 0 && none.output.contains("404 not_found"), "\(none.output)")

            let found = try await run(["list", "--search", "root"])
            #expect(found.status == 0 && found.output.contains("Root.Admin") && !found.output.contains("alice"), "\(found.output)")
        }
    }
}
