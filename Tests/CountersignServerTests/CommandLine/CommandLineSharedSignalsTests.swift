import Foundation
import Testing

/// `countersign admin ssf list|events|delete` and `admin policy set --risk-rules-file
/// --risk-mode`, run with the real executable against a listening server, as docs/ssf.md §6 and
/// docs/risk.md show them.
@Suite("The countersign admin ssf commands and the risk rules of admin policy set")
struct CommandLineSharedSignalsTests {
    typealias Streams = SharedSignalsStreamTests

    @Test("admin ssf list shows a receiver's stream and its SETs by state, events lists them, delete ends the stream",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func sharedSignalsCommands() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            let run = { (arguments: [String]) in try await CommandLineTests.run(["admin"] + arguments, environment: environment) }
            func json(_ done: CommandLineTests.Run) throws -> [String: Any] {
                #expect(done.status == 0, "\(done.output)")
                return try #require(try JSONSerialization.jsonObject(with: Data(done.output.utf8)) as? [String: Any], "\(done.output)")
            }
            let key = try await Streams.receiverKey(server)
            let stream = try #require(try await Streams.pollStream(server, key: key)["stream_id"] as? String)
            _ = try await server.enrollFactorDevice(for: try await server.createUser("ada"))

            let listed = try #require(try json(try await run(["ssf", "list", "--tenant", "default"]))["items"] as? [[String: Any]])
            #expect(listed.first?["stream_id"] as? String == stream)
            #expect((listed.first?["events"] as? [String: Any])?["waiting"] as? Int == 1)
            let events = try #require(try json(try await run(["ssf", "events", stream, "--limit", "5"]))["items"] as? [[String: Any]])
            #expect(events.first?["event_type"] as? String == Streams.caep + "credential-change")
            #expect(events.first?["status"] as? String == "waiting")

            let deleted = try await run(["ssf", "delete", stream, "--tenant", "default"])
            #expect(deleted.status == 0 && deleted.output.isEmpty, "\(deleted.output)")
            let again = try await run(["ssf", "delete", stream])
            #expect(again.status != 0 && again.output.contains("404 not_found: stream \(stream) was not found"), "\(again.output)")
            #expect(try await Streams.ssfCall(server, "GET", "/streams?stream_id=\(stream)", key: key).status == 404)
        }
    }

    @Test("admin policy set --risk-rules-file sets the rules from a JSON file and --risk-mode the mode; a file that is no array is refused",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func riskRulesFromAFile() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            let file = server.scratch.directory.appendingPathComponent("rules.json")
            try Data(#"[{"name": "new network", "signal": "new_network", "days": 30, "action": "number_match"}]"#.utf8).write(to: file)
            let set = try await CommandLineTests.run(
                ["admin", "policy", "set", "--risk-rules-file", file.path, "--risk-mode", "dry_run"], environment: environment)
            #expect(set.status == 0, "\(set.output)")
            let policy = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            #expect((policy["risk_rules"] as? [[String: any Sendable]])?.first?["name"] as? String == "new network")
            #expect(policy["risk_mode"] as? String == "dry_run")

            try Data(#"{"name": "x"}"#.utf8).write(to: file)
            let refused = try await CommandLineTests.run(["admin", "policy", "set", "--risk-rules-file", file.path], environment: environment)
            #expect(refused.status != 0 && refused.output.contains("does not hold a JSON array of risk rules"), "\(refused.output)")
            let invalid = try await CommandLineTests.run(["admin", "policy", "set", "--risk-mode", "sometimes"], environment: environment)
            #expect(invalid.status != 0 && invalid.output.contains("risk_mode"), "\(invalid.output)")
        }
    }
}
