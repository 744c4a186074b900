import Foundation
import Testing

/// `countersign admin passkey list|show|remove` and the passkey flags of `admin policy set`, run
/// with the real executable against a listening server, as docs/api.md §20 shows them.
@Suite("The countersign admin passkey commands")
struct CommandLineAdminPasskeyTests {
    @Test("admin passkey list and show show the user's passkeys; admin passkey remove removes one, and refuses one that is gone",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func listAndRemove() async throws {
        try await PasskeyBench.run(.sqlite, listening: true) { bench in
            let alice = bench.alice.user.userID
            let passkey = try await bench.alicesPasskey(name: "Laptop")
            let environment = ["COUNTERSIGN_SERVER": bench.server.base, "COUNTERSIGN_ADMIN_KEY": bench.server.adminKey]
            let run = { (arguments: [String]) in
                try await CommandLineTests.run(["admin", "passkey"] + arguments, environment: environment)
            }
            func items(_ listed: CommandLineTests.Run) throws -> [[String: Any]] {
                #expect(listed.status == 0, "\(listed.output)")
                let object = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any]
                return try #require(object?["items"] as? [[String: Any]], "\(listed.output)")
            }

            let listed = try items(try await run(["list", "--tenant", "default", "--user", alice]))
            #expect(listed.count == 1)
            #expect(listed.first?["name"] as? String == "Laptop")
            #expect(listed.first?["credential_id"] as? String == passkey.credentialID)
            let id = try #require(listed.first?["id"] as? String)
            let shown = try await run(["show", "--user", alice, "--passkey", id])
            #expect(shown.status == 0 && shown.output.contains("\"name\" : \"Laptop\""), "\(shown.output)")

            let removed = try await run(["remove", "--tenant", "default", "--user", alice, "--passkey", id])
            #expect(removed.status == 0, "\(removed.output)")
            #expect(removed.output.isEmpty)
            #expect(try items(try await run(["list", "--user", alice])).isEmpty)
            let keyID = try #require(bench.server.adminKey.split(separator: ".").first.map(String.init))
            #expect(try await bench.audit("passkey.removed").first?["actor"] as? String == "admin-key:\(keyID)")

            let again = try await run(["remove", "--tenant", "default", "--user", alice, "--passkey", id])
            #expect(again.status != 0)
            #expect(again.output.contains("404 not_found: passkey \(id) was not found"), "\(again.output)")
            let elsewhere = try await run(["list", "--tenant", "acme", "--user", alice])
            #expect(elsewhere.status != 0)
            #expect(elsewhere.output.contains("404 not_found: tenant acme was not found"), "\(elsewhere.output)")
            let missing = try await run(["list", "--user", alice, "--passkey", id])
            #expect(missing.status != 0, "list takes no --passkey")
        }
    }

    @Test("admin policy set with the passkey flags of docs/api.md §20, word for word, keeps the members it is not given",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func passkeyPolicyFromTheTerminal() async throws {
        // The docs' server, whose host example.com is a parent of.
        try await TestServer.with(.sqlite, configure: { $0.publicURL = URL(string: "https://auth.example.com") }) { server in
            let listening = "http://127.0.0.1:\(try #require(server.listening).port)"
            let environment = ["COUNTERSIGN_SERVER": listening, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            func passkeys(_ arguments: [String]) async throws -> [String: Any] {
                let run = try await CommandLineTests.run(["admin", "policy"] + arguments, environment: environment)
                #expect(run.status == 0, "\(arguments): \(run.output)")
                let policy = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
                return try #require(policy?["passkeys"] as? [String: Any], "\(run.output)")
            }
            let strict = try await passkeys(
                ["set", "--passkey-user-verification", "required", "--passkey-sign-count-regression", "flag"])
            #expect(strict["user_verification"] as? String == "required" && strict["sign_count_regression"] as? String == "flag")
            let parent = try await passkeys(["set", "--passkey-rp-id", "example.com", "--passkey-origin", "https://login.example.com"])
            #expect(parent["rp_id"] as? String == "example.com" && parent["origins"] as? [String] == ["https://login.example.com"])
            #expect(parent["user_verification"] as? String == "required", "the members not given stay")
            let off = try await passkeys(["set", "--passkeys-enabled", "false"])
            #expect(off["enabled"] as? Bool == false && off["rp_id"] as? String == "example.com")
            #expect(try await passkeys(["show"])["enabled"] as? Bool == false)

            let refused = try await CommandLineTests.run(
                ["admin", "policy", "set", "--passkey-origin", "https://login.bank.example"], environment: environment)
            #expect(refused.status != 0)
            let reason = "the host of https://login.bank.example is not example.com or below it"
            #expect(refused.output.contains("400 invalid_request: field passkeys.origins is invalid: \(reason)"), "\(refused.output)")

            let suffix = try await CommandLineTests.run(["admin", "policy", "set", "--passkey-rp-id", "com"], environment: environment)
            #expect(suffix.status != 0)
            #expect(suffix.output.contains(
                "400 invalid_request: field passkeys.rp_id is invalid: com is a public suffix, under which anyone may register a domain"),
                "\(suffix.output)")
            #expect(try await passkeys(["show"])["rp_id"] as? String == "example.com", "the refused RP ID changed nothing")
        }
    }
}
