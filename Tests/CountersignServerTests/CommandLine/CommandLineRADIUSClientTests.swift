import Foundation
import Testing
@testable import CountersignServer

/// `countersign admin radius-client list|create|show|update|delete|rotate-secret`, run with the
/// real executable against a listening server, as docs/api.md §22 shows them.
@Suite("The countersign admin radius-client commands")
struct CommandLineRADIUSClientTests {
    @Test("create (generated secret and --secret-stdin), list, show, update, rotate-secret and delete, as docs/api.md §22 shows them",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func lifecycle() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            func run(_ arguments: [String], input: String? = nil) async throws -> [String: Any]? {
                let run = try await CommandLineTests.run(["admin", "radius-client"] + arguments, environment: environment, input: input)
                #expect(run.status == 0, "\(arguments): \(run.output)")
                return run.output.isEmpty ? nil : try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
            }

            // The examples of docs/api.md §22, word for word.
            let created = try #require(try await run([
                "create", "--name", "VPN concentrator", "--network", "192.0.2.0/24", "--network", "2001:db8:1::/48",
                "--mode", "push-number", "--wait-seconds", "30", "--strip-realm",
                "--reply-attribute", "Filter-Id=vpn-users", "--reply-attribute", "Session-Timeout=28800",
            ]))
            let client = try #require(created["radius_client"] as? [String: Any])
            let id = try #require(client["id"] as? String)
            #expect(client["networks"] as? [String] == ["192.0.2.0/24", "2001:db8:1::/48"])
            #expect(client["mode"] as? String == "push-number")
            #expect(client["wait_seconds"] as? Int == 30)
            #expect(client["strip_realm"] as? Bool == true && client["strip_domain"] as? Bool == false)
            #expect(client["reply_attributes"] as? [[String: String]] == [
                ["name": "Filter-Id", "value": "vpn-users"], ["name": "Session-Timeout", "value": "28800"],
            ])
            let generated = try #require(created["secret"] as? String)
            #expect(RADIUSClientAdminTests.isGenerated(generated))
            #expect(try await RADIUSClientAdminTests.stored(id, on: server).secret == generated)

            let given = "Branch-firewall-secret-2026"
            let branch = try await CommandLineTests.run(
                ["admin", "radius-client", "create", "--name", "Branch firewall", "--network", "198.51.100.0/24", "--secret-stdin"],
                environment: environment, input: given + "\n")
            #expect(branch.status == 0, "\(branch.output)")
            #expect(!branch.output.contains(given) && !branch.output.contains("\"secret\""))
            let branchObject = try JSONSerialization.jsonObject(with: Data(branch.output.utf8)) as? [String: Any]
            let branchID = try #require((branchObject?["radius_client"] as? [String: Any])?["id"] as? String)
            #expect(try await RADIUSClientAdminTests.stored(branchID, on: server).secret == given)

            let listed = try #require(try await run(["list"]))
            #expect((listed["items"] as? [[String: Any]])?.map { $0["id"] as? String } == [id, branchID])
            #expect((try await run(["show", id]))?["name"] as? String == "VPN concentrator")

            let updated = try #require(try await run(["update", id, "--mode", "auto", "--no-strip-realm", "--reply-attribute", ""]))
            #expect(updated["mode"] as? String == "auto")
            #expect(updated["strip_realm"] as? Bool == false)
            #expect((updated["reply_attributes"] as? [Any])?.isEmpty == true)
            #expect(updated["wait_seconds"] as? Int == 30, "what is not given stays")

            let rotated = try #require(try await run(["rotate-secret", id]))
            let newSecret = try #require(rotated["secret"] as? String)
            #expect(RADIUSClientAdminTests.isGenerated(newSecret) && newSecret != generated)
            #expect(try await RADIUSClientAdminTests.stored(id, on: server).secret == newSecret)
            let typed = try #require(try await run(["rotate-secret", id, "--secret-stdin"], input: given + "-vpn\n"))
            #expect(typed["secret"] == nil)
            #expect(try await RADIUSClientAdminTests.stored(id, on: server).secret == given + "-vpn")

            #expect(try await run(["delete", id]) == nil)
            let gone = try await CommandLineTests.run(["admin", "radius-client", "show", id], environment: environment)
            #expect(gone.status != 0)
            #expect(gone.output.contains("404 not_found: RADIUS client \(id) was not found"), "\(gone.output)")
        }
    }

    @Test("a refusal is printed with the rule broken, and a reply attribute must be NAME=VALUE",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func refusals() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            let hostBits = try await CommandLineTests.run(
                ["admin", "radius-client", "create", "--name", "VPN", "--network", "192.0.2.1/24"], environment: environment)
            #expect(hostBits.status != 0)
            #expect(hostBits.output.contains(
                "400 invalid_request: field networks is invalid: 192.0.2.1/24 has host bits set; write the network's first address"),
                "\(hostBits.output)")
            let noNetwork = try await CommandLineTests.run(["admin", "radius-client", "create", "--name", "VPN"], environment: environment)
            #expect(noNetwork.status != 0)
            #expect(noNetwork.output.contains("400 invalid_request: field networks is required"), "\(noNetwork.output)")
            let shortSecret = try await CommandLineTests.run(
                ["admin", "radius-client", "create", "--name", "VPN", "--network", "192.0.2.0/24", "--secret-stdin"],
                environment: environment, input: "tooShort\n")
            #expect(shortSecret.status != 0)
            #expect(shortSecret.output.contains(
                "400 invalid_request: field secret is invalid: must be 16 to 128 printable ASCII characters without spaces"),
                "\(shortSecret.output)")
            #expect(!shortSecret.output.contains("tooShort"), "the secret typed is not echoed")
            let noValue = try await CommandLineTests.run(
                ["admin", "radius-client", "create", "--name", "VPN", "--network", "192.0.2.0/24", "--reply-attribute", "Filter-Id"],
                environment: environment)
            #expect(noValue.status != 0)
            #expect(noValue.output.contains("--reply-attribute takes NAME=VALUE, e.g. Filter-Id=vpn-users, not Filter-Id"),
                    "\(noValue.output)")
            let list = try await CommandLineTests.run(["admin", "radius-client", "list"], environment: environment)
            let items = (try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [String: Any])?["items"] as? [Any]
            #expect(items?.isEmpty == true, "nothing was stored: \(list.output)")
        }
    }

    @Test("--allowed-group, --group-reply-attribute and --directory-password, on RADIUS clients and clients",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func groupsAndPassword() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            let staff = try await GroupPolicyTests.group(server, "staff", members: [])
            let created = try await CommandLineTests.run([
                "admin", "radius-client", "create", "--name", "VPN", "--network", "192.0.2.0/24", "--allowed-group", "staff",
                "--group-reply-attribute", "staff:Filter-Id=vpn-staff", "--group-reply-attribute", "staff:Session-Timeout=3600",
            ], environment: environment)
            #expect(created.status == 0, "\(created.output)")
            let object = try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any]
            let client = try #require(object?["radius_client"] as? [String: Any])
            #expect(client["allowed_groups"] as? [String] == [staff])
            #expect(client["group_reply_attributes"] as? [[String: Any]] != nil)
            let replies = try #require(client["group_reply_attributes"] as? [[String: Any]])
            #expect(replies.count == 1 && replies[0]["group"] as? String == staff)
            #expect(replies[0]["attributes"] as? [[String: String]] == [
                ["name": "Filter-Id", "value": "vpn-staff"], ["name": "Session-Timeout", "value": "3600"]])
            let id = try #require(client["id"] as? String)
            let cleared = try await CommandLineTests.run(
                ["admin", "radius-client", "update", id, "--allowed-group", "", "--group-reply-attribute", ""], environment: environment)
            #expect(cleared.status == 0, "\(cleared.output)")
            let after = try JSONSerialization.jsonObject(with: Data(cleared.output.utf8)) as? [String: Any]
            #expect((after?["allowed_groups"] as? [Any])?.isEmpty == true && (after?["group_reply_attributes"] as? [Any])?.isEmpty == true)

            let malformed = try await CommandLineTests.run(
                ["admin", "radius-client", "update", id, "--group-reply-attribute", "Filter-Id=x"], environment: environment)
            #expect(malformed.status != 0)
            #expect(malformed.output.contains("--group-reply-attribute takes GROUP:NAME=VALUE"), "\(malformed.output)")
            let password = try await CommandLineTests.run(
                ["admin", "radius-client", "update", id, "--directory-password"], environment: environment)
            #expect(password.status != 0)
            #expect(password.output.contains("field directory_password is invalid: needs the tenant's directory"), "\(password.output)")

            let portal = try await CommandLineTests.run(
                ["admin", "client", "create", "--name", "Portal", "--allowed-group", "staff"], environment: environment)
            #expect(portal.status == 0, "\(portal.output)")
            let portalObject = try JSONSerialization.jsonObject(with: Data(portal.output.utf8)) as? [String: Any]
            #expect((portalObject?["client"] as? [String: Any])?["allowed_groups"] as? [String] == [staff])
            let unknown = try await CommandLineTests.run(
                ["admin", "client", "create", "--name", "Portal 2", "--allowed-group", "nobody"], environment: environment)
            #expect(unknown.status != 0)
            #expect(unknown.output.contains("field allowed_groups is invalid: names no group of the tenant: nobody"), "\(unknown.output)")
        }
    }
}
