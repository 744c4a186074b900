import Foundation
import Testing
@testable import CountersignServer

/// `countersign admin directory show|set|delete|test|sync [--dry-run]|last-sync`, run with the real
/// executable against a listening server and a real directory (`SlapdHarness`), as docs/api.md
/// §24 shows them.
@Suite("The countersign admin directory commands")
struct CommandLineDirectoryTests {
    /// The default tenant's users by username.
    static func users(_ server: TestServer) async throws -> [String: [String: any Sendable]] {
        let page = try await server.admin("GET", "/admin/v1/tenants/default/users?limit=100")
        let items = page["items"] as? [[String: any Sendable]] ?? []
        return Dictionary(items.map { ($0["username"] as? String ?? "", $0) }) { first, _ in first }
    }

    static let enabled = (CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true")
        && SlapdHarness.available

    @Test("set (password from standard input), show, test, sync --dry-run, sync, last-sync and delete against slapd",
          .enabled(if: enabled))
    func lifecycle() async throws {
        let slapd = try await SlapdHarness.start()
        defer { slapd.shutdown() }
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            func run(_ arguments: [String], input: String? = nil) async throws -> [String: Any]? {
                let run = try await CommandLineTests.run(["admin", "directory"] + arguments, environment: environment, input: input)
                #expect(run.status == 0, "\(arguments): \(run.output)")
                return run.output.isEmpty ? nil : try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
            }

            let set = try await CommandLineTests.run([
                "admin", "directory", "set", "--kind", "openldap", "--ldap-server", slapd.ldapsURL,
                "--ca-certificate-file", slapd.directory.appendingPathComponent("ca.pem").path,
                "--bind-dn", DirectoryFixture.serviceDN, "--user-base-dn", DirectoryFixture.people,
                "--group-base-dn", DirectoryFixture.groups, "--sync-interval-minutes", "0", "--bind-password-stdin",
            ], environment: environment, input: DirectoryFixture.servicePassword + "\n")
            #expect(set.status == 0, "\(set.output)")
            #expect(!set.output.contains(DirectoryFixture.servicePassword) && !set.output.contains("bind_password"),
                    "the password is not shown back")
            let directory = try #require(try JSONSerialization.jsonObject(with: Data(set.output.utf8)) as? [String: Any])
            #expect(directory["kind"] as? String == "openldap" && directory["servers"] as? [String] == [slapd.ldapsURL])
            #expect(directory["user_filter"] as? String == "(objectClass=inetOrgPerson)", "the kind's default")
            #expect((directory["groups"] as? [String: Any])?["base_dn"] as? String == DirectoryFixture.groups)
            #expect(directory["sync_interval_minutes"] as? Int == 0)
            #expect((try await run(["show"]))?["bind_dn"] as? String == DirectoryFixture.serviceDN)

            let tested = try #require(try await run(["test"]))
            #expect(tested["users_found"] as? Int == 4)
            #expect(Set(tested["sample"] as? [String] ?? []) == ["alice", "bob", "carol", "dave"])

            let preview = try #require(try await run(["sync", "--dry-run"]))
            #expect(preview["dry_run"] as? Bool == true)
            #expect(Set(preview["users_created"] as? [String] ?? []) == ["alice", "bob", "carol", "dave"])
            #expect(try await Self.users(server).isEmpty, "a dry run writes nothing")
            let never = try await CommandLineTests.run(["admin", "directory", "last-sync"], environment: environment)
            #expect(never.status != 0 && never.output.contains("404 not_found: a sync of this directory was not found"),
                    "a dry run is not recorded: \(never.output)")

            let synced = try #require(try await run(["sync"]))
            #expect(synced["dry_run"] as? Bool == false)
            #expect(Set(synced["groups_created"] as? [String] ?? []) == ["staff", "engineering", "everyone"])
            let users = try await Self.users(server)
            #expect(Set(users.keys) == ["alice", "bob", "carol", "dave"])
            #expect(users["alice"]?["source"] as? String == "directory")

            let last = try #require(try await run(["last-sync"]))
            #expect((last["actor"] as? String)?.hasPrefix("admin-key:") == true)
            #expect((last["summary"] as? [String: Any])?["users_found"] as? Int == 4)

            #expect(try await run(["delete"]) == nil)
            let gone = try await CommandLineTests.run(["admin", "directory", "show"], environment: environment)
            #expect(gone.status != 0 && gone.output.contains("404 not_found: this tenant has no directory"), "\(gone.output)")
            #expect(try await Self.users(server).count == 4, "the users stay")
        }
    }

    @Test("a refusal names the field; the first set needs the password; a settings file may not hold it",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func refusals() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            let settings = ["--kind", "openldap", "--ldap-server", "ldaps://ldap.example.test", "--bind-dn", DirectoryFixture.serviceDN,
                            "--user-base-dn", DirectoryFixture.people]
            let noPassword = try await CommandLineTests.run(["admin", "directory", "set"] + settings, environment: environment)
            #expect(noPassword.status != 0)
            #expect(noPassword.output.contains("400 invalid_request: field bind_password is required"), "\(noPassword.output)")

            let badFilter = try await CommandLineTests.run(
                ["admin", "directory", "set"] + settings + ["--group-filter", "objectClass=group", "--bind-password-stdin"],
                environment: environment, input: "typed-secret\n")
            #expect(badFilter.status != 0)
            #expect(badFilter.output.contains("400 invalid_request: field groups.filter is invalid: must be an LDAP filter in parentheses"),
                    "\(badFilter.output)")
            #expect(!badFilter.output.contains("typed-secret"))

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("directory-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(#"{"kind": "openldap", "bind_password": "in-a-file"}"#.utf8).write(to: file)
            let inFile = try await CommandLineTests.run(
                ["admin", "directory", "set", "--settings-file", file.path], environment: environment)
            #expect(inFile.status != 0)
            #expect(inFile.output.contains("holds bind_password: keep the password out of files and use --bind-password-stdin"),
                    "\(inFile.output)")

            let none = try await CommandLineTests.run(["admin", "directory", "show"], environment: environment)
            #expect(none.output.contains("404 not_found: this tenant has no directory"), "nothing was stored: \(none.output)")
        }
    }
}
