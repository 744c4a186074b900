import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// What a user's devices are told about their account, and their "not me", through the device
/// API with signed requests (docs/recovery.md §7): a device added, a recovery code or a pass
/// used.
@Suite("Security notices: a device added or a code used, and 'not me' from another device")
struct SecurityNoticeTests {
    static func notices(_ device: RawDevice) async throws -> [[String: any Sendable]] {
        let answer = try await device.call("GET", "/device/v1/notices")
        #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        return try #require(answer["notices"] as? [[String: any Sendable]])
    }

    @Test("A second phone is announced to the first; 'not me' deregisters it, ends the sessions and pauses requests, once",
          arguments: Engine.available)
    func deviceAddedNotMe(engine: Engine) async throws {
        try await AccountBench.run(engine) { bench in
            let first = bench.user.device
            #expect(try await Self.notices(first).isEmpty, "nothing since it enrolled but itself")
            bench.server.clock.advance(by: 60)
            let second = try await bench.server.enrollDevice(for: bench.user.userID, username: "alice", name: "Unknown phone")
            let shown = try await Self.notices(first)
            #expect(shown.count == 1)
            let notice = try #require(shown.first)
            #expect(notice["kind"] as? String == "device_added" && notice["subject_id"] as? String == second.device.id)
            #expect(notice["subject_name"] as? String == "Unknown phone" && notice["expires_at"] is String)
            #expect(try await Self.notices(second.device).isEmpty, "a device is not told about itself, nor what came before it")

            let id = try #require(notice["id"] as? String)
            let report = try await first.call("POST", "/device/v1/notices/\(id)/not-me")
            #expect(report.status == 200, "\(report.errorDescription ?? "")")
            #expect(report["removed"] as? String == "device" && report["sessions_ended"] as? Int == 1)
            #expect(report["requests_suppressed_until"] is String)
            #expect(try await bench.device(second.device.id)?.status != .active, "the new phone is deregistered")
            #expect(try await bench.browser.get("/account").hidden("attempt") != nil, "the account page's session ended")
            let reported = try await bench.audit("security_notice.reported")
            #expect(reported.first?["actor"] as? String == "device:\(first.id)")

            let again = try await first.call("POST", "/device/v1/notices/\(id)/not-me")
            #expect(again.status == 409 && again.error == "already_reported")
            let unknown = try await first.call("POST", "/device/v1/notices/ntc_unknown/not-me")
            #expect(unknown.status == 404 && unknown.error == "unknown_notice")
        }
    }

    @Test("A recovery code used is announced; 'not me' revokes the codes and ends the session it opened; another user's device cannot answer")
    func recoveryCodeNotMe() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let codes = try await RecoveryCodeTests.makeCodes(bench)
            let thief = bench.newBrowser()
            #expect(try await RecoveryCodeTests.recover(thief, username: "alice", code: codes[0]).status == 303)
            let notice = try #require(try await Self.notices(bench.user.device).first)
            #expect(notice["kind"] as? String == "recovery_code_used")
            let id = try #require(notice["id"] as? String)

            let bob = try await bench.server.enrolledUser("bob")
            let foreign = try await bob.device.call("POST", "/device/v1/notices/\(id)/not-me")
            #expect(foreign.status == 404 && foreign.error == "unknown_notice")

            let report = try await bench.user.device.call("POST", "/device/v1/notices/\(id)/not-me")
            #expect(report.status == 200 && report["removed"] as? String == "recovery_codes", "\(report.errorDescription ?? "")")
            #expect(try await thief.get("/account").hidden("attempt") != nil, "the recovery session ended")
            let refused = try await RecoveryCodeTests.recover(bench.newBrowser(), username: "alice", code: codes[1])
            #expect(refused.status == 400, "the other codes are revoked")
        }
    }

    @Test("A pass used is announced; 'not me' revokes it; a notice can be answered for a week")
    func accessPassNotMeAndExpiry() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let (_, pass) = try await TemporaryAccessPassTests.issue(bench.server, bench.user.userID, ["one_time": false])
            #expect(try await RecoveryCodeTests.recover(bench.newBrowser(), username: "alice", code: pass).status == 303)
            #expect(try await RecoveryCodeTests.recover(bench.newBrowser(), username: "alice", code: pass).status == 303)
            let shown = try await Self.notices(bench.user.device)
            #expect(shown.count == 2 && shown.allSatisfy { $0["kind"] as? String == "access_pass_used" })
            let report = try await bench.user.device.call("POST", "/device/v1/notices/\(try #require(shown.first?["id"] as? String))/not-me")
            #expect(report.status == 200 && report["removed"] as? String == "access_pass")
            #expect(try await TemporaryAccessPassTests.passes(bench.server, bench.user.userID).first?["state"] as? String == "revoked")

            bench.server.clock.advance(by: SQLSecurityNoticeRepository.lifetime + 1)
            #expect(try await Self.notices(bench.user.device).isEmpty, "expired notices are not listed")
            let late = try await bench.user.device.call("POST", "/device/v1/notices/\(try #require(shown.last?["id"] as? String))/not-me")
            #expect(late.status == 410 && late.error == "notice_expired")
        }
    }

    @Test("A passkey added is announced to the phone; 'not me' removes it")
    func passkeyAddedNotMe() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            bench.server.clock.advance(by: 60)
            _ = try await bench.alicesPasskey(name: "Not mine")
            let stored = try await bench.passkeys(of: bench.alice.user.userID)
            let passkeyID = try #require(stored.first?["id"] as? String)
            let notice = try #require(try await Self.notices(bench.alice.user.device).first)
            #expect(notice["kind"] as? String == "passkey_added" && notice["subject_id"] as? String == passkeyID)
            #expect(notice["subject_name"] as? String == "Not mine")
            let report = try await bench.alice.user.device.call(
                "POST", "/device/v1/notices/\(try #require(notice["id"] as? String))/not-me")
            #expect(report.status == 200 && report["removed"] as? String == "passkey", "\(report.errorDescription ?? "")")
            #expect(try await bench.passkeys(of: bench.alice.user.userID).isEmpty)
        }
    }
}
