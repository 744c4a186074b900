import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// Temporary access passes and the recovery codes' admin view, through the admin API, driven
/// in memory (docs/recovery.md): a pass signs in at `/account/recover` to the same enrollment-
/// only session as a recovery code, within its times, once or until it expires, from its
/// networks; revoking it ends what it opened.
@Suite("Temporary access passes, and recovery codes seen and revoked by an administrator")
struct TemporaryAccessPassTests {
    static func issue(_ server: TestServer, _ userID: String, _ body: [String: any Sendable] = [:]) async throws
        -> (id: String, code: String) {
        let answer = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/temporary-access-passes", json: body)
        #expect(answer.status == 201, "\(answer.errorDescription ?? "")")
        let pass = try #require(answer["pass"] as? [String: any Sendable])
        return (try #require(pass["id"] as? String), try #require(answer["code"] as? String))
    }

    static func passes(_ server: TestServer, _ userID: String) async throws -> [[String: any Sendable]] {
        let answer = try await server.admin("GET", "/admin/v1/tenants/default/users/\(userID)/temporary-access-passes")
        #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        return try #require(answer["items"] as? [[String: any Sendable]])
    }

    @Test("A one-time pass signs in once to a session that only enrolls; a second use is refused and the pass reads used",
          arguments: Engine.available)
    func oneTimePass(engine: Engine) async throws {
        try await AccountBench.run(engine) { bench in
            let (id, code) = try await Self.issue(bench.server, bench.user.userID)
            #expect(code.wholeMatch(of: /[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}/) != nil)
            let first = try await RecoveryCodeTests.recover(bench.newBrowser(), username: "alice", code: code)
            #expect(first.status == 303, "\(first.text.prefix(500))")
            let again = try await RecoveryCodeTests.recover(bench.newBrowser(), username: "alice", code: code)
            #expect(again.status == 400 && again.text.contains("The username or code is not right."))
            let listed = try await Self.passes(bench.server, bench.user.userID)
            #expect(listed.first?["id"] as? String == id && listed.first?["state"] as? String == "used")
            #expect(listed.first?["uses"] as? Int == 1 && listed.first?["code"] == nil)
            #expect(try await bench.audit("recovery.access_pass_issued").count == 1)
            #expect(try await bench.audit("recovery.access_pass_used").count == 1)
        }
    }

    @Test("A pass works from its start to its expiry; a reusable one until then; revoking it ends its session")
    func timesAndRevocation() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let server = bench.server
            let later = Timestamps.format(server.clock.now.addingTimeInterval(7200))
            let (_, scheduled) = try await Self.issue(server, bench.user.userID, ["starts_at": later, "one_time": false])
            #expect(try await Self.passes(server, bench.user.userID).first?["state"] as? String == "scheduled")
            let early = try await RecoveryCodeTests.recover(bench.newBrowser(), username: "alice", code: scheduled)
            #expect(early.status == 400, "not yet")
            server.clock.advance(by: 7201)
            let browser = bench.newBrowser()
            #expect(try await RecoveryCodeTests.recover(browser, username: "alice", code: scheduled).status == 303)
            let other = bench.newBrowser()
            #expect(try await RecoveryCodeTests.recover(other, username: "alice", code: scheduled).status == 303, "reusable")
            #expect(try await browser.get("/account").text.contains("with a temporary access pass"))

            let (id, _) = (try await Self.passes(server, bench.user.userID).first?["id"] as? String ?? "", 0)
            let revoked = try await server.admin("DELETE", "/admin/v1/tenants/default/users/\(bench.user.userID)/temporary-access-passes/\(id)")
            #expect(revoked.status == 204, "\(revoked.errorDescription ?? "")")
            #expect(try await browser.get("/account").hidden("attempt") != nil, "the session it opened ended")
            let twice = try await server.admin("DELETE", "/admin/v1/tenants/default/users/\(bench.user.userID)/temporary-access-passes/\(id)")
            #expect(twice.status == 409 && twice.errorDescription == "temporary access pass \(id) is already revoked")

            let (_, short) = try await Self.issue(server, bench.user.userID, ["lifetime_seconds": 3600])
            server.clock.advance(by: 3601)
            let expired = try await RecoveryCodeTests.recover(bench.newBrowser(), username: "alice", code: short)
            #expect(expired.status == 400)
            #expect(try await Self.passes(server, bench.user.userID).first?["state"] as? String == "expired")
        }
    }

    @Test("A pass for some networks refuses the right code from elsewhere, and takes it from inside")
    func allowedNetworks() async throws {
        try await AccountBench.run(.sqlite) { bench in
            // In memory the router sees no address: a pass for some networks cannot be used.
            let (_, code) = try await Self.issue(bench.server, bench.user.userID, ["allowed_networks": ["192.0.2.0/24"]])
            let outside = try await RecoveryCodeTests.recover(bench.newBrowser(), username: "alice", code: code)
            #expect(outside.status == 403 && outside.text.contains("cannot be used from the network you are on"))
            #expect(RecoveryService.admits("192.0.2.77", ["192.0.2.0/24"]))
            #expect(RecoveryService.admits("::ffff:192.0.2.77", ["192.0.2.0/24"]))
            #expect(!RecoveryService.admits("198.51.100.1", ["192.0.2.0/24"]))
            #expect(RecoveryService.admits(nil, []))
        }
    }

    @Test("Bad requests name their field and issue nothing", arguments: [
        (["lifetime_seconds": 3599] as [String: any Sendable], "field lifetime_seconds is invalid: must be from 3600 (1 hour) to 2592000 (30 days)"),
        (["lifetime_seconds": 2_592_001], "field lifetime_seconds is invalid: must be from 3600 (1 hour) to 2592000 (30 days)"),
        (["starts_at": "tomorrow"], "field starts_at is invalid: must be an RFC 3339 time such as 2026-03-02T09:00:00Z"),
        (["starts_at": "2099-01-01T00:00:00Z"], "field starts_at is invalid: must be within 30 days from now"),
        (["allowed_networks": ["192.0.2.1/24"]], "field allowed_networks is invalid: 192.0.2.1/24 has host bits set; write the network's first address"),
        (["allowed_networks": ["vpn"]], "field allowed_networks is invalid: vpn is not an IPv4 or IPv6 address or network"),
    ])
    func badRequests(body: [String: any Sendable], message: String) async throws {
        try await TestServer.routed { server in
            let user = try await server.createUser("alice")
            let answer = try await server.admin("POST", "/admin/v1/tenants/default/users/\(user)/temporary-access-passes", json: body)
            #expect(answer.status == 400 && answer.errorDescription == message, "\(answer.errorDescription ?? "")")
            #expect(try await Self.passes(server, user).isEmpty)
        }
    }

    @Test("An administrator sees how many recovery codes are left, never the codes, and revoking them ends their session")
    func adminSeesAndRevokesCodes() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let path = "/admin/v1/tenants/default/users/\(bench.user.userID)/recovery-codes"
            let none = try await bench.server.admin("GET", path)
            #expect(none.status == 200 && none["exists"] as? Bool == false && none["total"] as? Int == 0)
            let missing = try await bench.server.admin("DELETE", path)
            #expect(missing.status == 404 && missing.errorDescription == "recovery codes of user \(bench.user.userID) was not found")

            let codes = try await RecoveryCodeTests.makeCodes(bench)
            let browser = bench.newBrowser()
            #expect(try await RecoveryCodeTests.recover(browser, username: "alice", code: codes[0]).status == 303)
            let seen = try await bench.server.admin("GET", path)
            #expect(seen["exists"] as? Bool == true && seen["total"] as? Int == 10 && seen["remaining"] as? Int == 9)
            #expect(seen["created_at"] is String && seen["last_used_at"] is String)
            #expect(!codes.contains { seen.text.contains($0) })

            let revoked = try await bench.server.admin("DELETE", path)
            #expect(revoked.status == 204)
            #expect(try await browser.get("/account").hidden("attempt") != nil, "the session a code opened ended")
            let refused = try await RecoveryCodeTests.recover(bench.newBrowser(), username: "alice", code: codes[1])
            #expect(refused.status == 400)
            #expect(try await bench.audit("recovery.codes_revoked").first?["actor"] as? String != nil)
        }
    }

    @Test("A disabled user's pass and codes sign in to nothing, with the same answer as a wrong code")
    func disabledUser() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let codes = try await RecoveryCodeTests.makeCodes(bench)
            let (_, pass) = try await Self.issue(bench.server, bench.user.userID)
            let disabled = try await bench.server.admin(
                "PATCH", "/admin/v1/tenants/default/users/\(bench.user.userID)", json: ["status": "disabled"])
            #expect(disabled.status == 200, "\(disabled.errorDescription ?? "")")
            for code in [codes[0], pass] {
                let answer = try await RecoveryCodeTests.recover(bench.newBrowser(), username: "alice", code: code)
                #expect(answer.status == 400 && answer.text.contains("The username or code is not right."))
            }
            let issue = try await bench.server.admin(
                "POST", "/admin/v1/tenants/default/users/\(bench.user.userID)/temporary-access-passes", json: [:])
            #expect(issue.status == 409 && issue.errorDescription == "user \(bench.user.userID) is not active")
        }
    }
}

extension AccountBench {
    /// Another browser, with no cookies, on the same server.
    func newBrowser() -> AccountBrowser {
        AccountBrowser(server: server, send: browser.send)
    }
}
