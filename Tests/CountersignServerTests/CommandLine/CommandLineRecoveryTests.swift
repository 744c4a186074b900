import Foundation
import Testing
@testable import CountersignServer

/// `countersign admin access-pass issue|list|revoke` and `countersign admin recovery-codes`,
/// run with the real executable against a listening server, and the pass typed at
/// `/account/recover` over HTTP, where the server sees the address a pass's networks restrict.
@Suite("The countersign admin access-pass and recovery-codes commands")
struct CommandLineRecoveryTests {
    @Test("issue prints the pass, which signs in over HTTP from its network and not from another; list, revoke, recovery-codes",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func accessPassLifecycle() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            let user = try await server.createUser("alice")
            func run(_ arguments: [String]) async throws -> CommandLineTests.Run {
                try await CommandLineTests.run(["admin"] + arguments, environment: environment)
            }

            let issued = try await run(["access-pass", "issue", user, "--lifetime", "7200", "--no-one-time",
                                        "--allowed-network", "127.0.0.0/8", "--allowed-network", "::1/128"])
            #expect(issued.status == 0, "\(issued.output)")
            let lines = issued.output.split(separator: "\n").map(String.init)
            let code = try #require(lines.first)
            #expect(code.wholeMatch(of: /[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}/) != nil, "\(issued.output)")
            #expect(lines.count > 1 && lines[1].contains("works any number of times") && lines[1].contains("shown only this once"))

            let browser = AccountBrowser(server: server, send: { try await server.send($0) })
            let signedIn = try await RecoveryCodeTests.recover(browser, username: "alice", code: code)
            // Over HTTP the redirect to the account page may be followed already.
            #expect([200, 303].contains(signedIn.status), "from 127.0.0.1: \(signedIn.text.prefix(500))")
            #expect(try await browser.get("/account").text.contains("with a temporary access pass"))

            let elsewhere = try await run(["access-pass", "issue", user, "--allowed-network", "192.0.2.0/24", "--json"])
            let other = try #require(try JSONSerialization.jsonObject(with: Data(elsewhere.output.utf8)) as? [String: Any])
            let refused = try await RecoveryCodeTests.recover(
                AccountBrowser(server: server, send: { try await server.send($0) }), username: "alice",
                code: try #require(other["code"] as? String))
            #expect(refused.status == 403 && refused.text.contains("cannot be used from the network you are on"))

            let listed = try await run(["access-pass", "list", user])
            let items = try #require((try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any])?["items"]
                as? [[String: Any]])
            #expect(items.count == 2 && items.allSatisfy { $0["code"] == nil })
            let reusable = try #require(items.first { $0["one_time"] as? Bool == false })
            #expect(reusable["allowed_networks"] as? [String] == ["127.0.0.0/8", "::1/128"] && reusable["uses"] as? Int == 1)
            let passID = try #require(reusable["id"] as? String)
            #expect(try await run(["access-pass", "revoke", user, passID]).status == 0)
            #expect(try await browser.get("/account").hidden("attempt") != nil, "revoking ended its session")
            let again = try await run(["access-pass", "revoke", user, passID])
            #expect(again.status != 0 && again.output.contains("409 conflict: temporary access pass \(passID) is already revoked"))

            let bad = try await run(["access-pass", "issue", user, "--lifetime", "60"])
            #expect(bad.status != 0 && bad.output.contains("field lifetime_seconds is invalid: must be from 3600 (1 hour)"), "\(bad.output)")

            let codes = try await run(["recovery-codes", user])
            #expect(codes.status == 0 && codes.output.contains("\"exists\" : false") || codes.output.contains("\"exists\": false"),
                    "\(codes.output)")
            let revokeNone = try await run(["recovery-codes", user, "--revoke"])
            #expect(revokeNone.status != 0 && revokeNone.output.contains("404 not_found: recovery codes of user \(user) was not found"))
        }
    }

    @Test("policy set --remembered-browser-days, and remembered-browsers lists a user's and forgets one",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func rememberedBrowsers() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            func run(_ arguments: [String]) async throws -> CommandLineTests.Run {
                try await CommandLineTests.run(["admin"] + arguments, environment: environment)
            }
            let set = try await run(["policy", "set", "--remembered-browser-days", "30"])
            #expect(set.status == 0, "\(set.output)")
            let refused = try await run(["policy", "set", "--remembered-browser-days", "91"])
            #expect(refused.status != 0 && refused.output.contains("remembered_browser_days"), "\(refused.output)")

            let client = try await server.createCodeFlowClient()
            func days(_ output: String) -> Int? {
                let object = (try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: Any]
                return ((object?["client"] as? [String: Any]) ?? object)?["remember_browser_days"] as? Int
            }
            let never = try await run(["client", "update", client.id, "--remember-browser-days", "0"])
            #expect(never.status == 0 && days(never.output) == 0, "\(never.output)")
            let tenants = try await run(["client", "update", client.id, "--remember-browser-days", ""])
            #expect(tenants.status == 0 && days(tenants.output) == nil && tenants.output.contains("client_id"), "\(tenants.output)")
            let alice = try await server.enrolledUser("alice")
            _ = try await RememberedBrowserTests.signInRemembering(
                server, RememberedBrowserTests.KeyedBrowser(pages: PageVisitor(server)), client: client, user: alice)
            let listed = try await run(["remembered-browsers", alice.userID])
            let items = try #require((try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any])?["items"]
                as? [[String: Any]], "\(listed.output)")
            let id = try #require(items.first?["id"] as? String)
            #expect(items.count == 1 && items.first?["acr"] as? String == "urn:countersign:acr:confirm")
            #expect(try await run(["remembered-browsers", alice.userID, "--forget", id]).status == 0)
            let again = try await run(["remembered-browsers", alice.userID, "--forget", id])
            #expect(again.status != 0 && again.output.contains("remembered browser \(id) was not found"), "\(again.output)")
        }
    }
}
