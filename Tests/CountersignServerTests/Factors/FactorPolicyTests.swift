import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// Denials with a reason, "I did not request this", the per-user rate limit, TOTP codes and the
/// tenant's policy as the administration API sets it.
@Suite("Deny reasons, fatigue, rate limit, TOTP")
struct FactorPolicyTests {
    @Test("a denial carries the device's signed reason; the server's own reasons cannot be claimed")
    func denyReasons() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            _ = try await server.startApproval(client, user: "ada")
            let forged = try await device.answer(.deny, factors: ["confirm"], reason: .wrongNumber)
            #expect(forged.status == 400 && forged.error == "invalid_response")
            let cancelled = try await device.answer(.deny, factors: ["confirm"], reason: .cancelled)
            #expect(cancelled["status"] as? String == "denied" && cancelled["reason"] as? String == "cancelled")
            _ = try await server.startApproval(client, user: "ada")
            let plain = try await device.answer(.deny, factors: ["confirm"])
            #expect(plain["reason"] as? String == "declined")
        }
    }

    @Test("'I did not request this' is audited and keeps new requests away for the tenant's period")
    func notRequestedSuppresses() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["not_requested_suppression_seconds": 600])
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            _ = try await server.startApproval(client, user: "ada")
            let report = try await device.answer(.deny, factors: ["confirm"], reason: .notRequested)
            #expect(report["reason"] as? String == "not_requested")
            let refused = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")])
            #expect(refused.status == 403 && refused.error == "access_denied")
            #expect(refused.header("Retry-After") == "600")
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit")
            #expect(String(decoding: audit.data, as: UTF8.self).contains("approval.not_requested"))
            server.clock.advance(by: 601)
            _ = try await server.startApproval(client, user: "ada")
        }
    }

    @Test("an administrator lifts the pause")
    func suppressionLifted() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID)
            _ = try await server.startApproval(client, user: "ada")
            _ = try await device.answer(.deny, factors: ["confirm"], reason: .notRequested)
            #expect(try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")]).status == 403)
            let lifted = try await server.admin("DELETE", "/admin/v1/tenants/default/users/\(userID)/request-suppression")
            #expect(lifted.status == 204)
            _ = try await server.startApproval(client, user: "ada")
        }
    }

    @Test("one user is sent at most the tenant's requests per minute; Retry-After says when a slot frees")
    func perUserRateLimit() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            _ = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            _ = try await server.enrollFactorDevice(for: try await server.createUser("bob"))
            for _ in 0..<5 { _ = try await server.startApproval(client, user: "ada") }
            let sixth = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")])
            #expect(sixth.status == 403 && sixth.error == "access_denied" && sixth.header("Retry-After") == "60")
            _ = try await server.startApproval(client, user: "bob")
            server.clock.advance(by: 30)
            let later = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")])
            #expect(later.status == 403 && later.header("Retry-After") == "30", "a slot frees a minute after the oldest request")
            server.clock.advance(by: 31)
            _ = try await server.startApproval(client, user: "ada")
            try await server.setPolicy(["user_requests_per_minute": 0])
            for _ in 0..<6 { _ = try await server.startApproval(client, user: "ada") }
        }
    }

    @Test("a TOTP seed reaches the device sealed and signed for; its codes verify once each")
    func totpCodes() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"), totp: true)
            let enrollment = try #require(device.totp)
            #expect(device.receipt.totpDigest == (try enrollment.digest()))
            let (enc, ciphertext) = try enrollment.sealedSeed.parts()
            var recipient = try HPKE.Recipient(
                privateKey: device.agreement, ciphersuite: HPKESuite.countersign,
                info: SealedDetails.totpSeedInfo(deviceID: device.deviceID), encapsulatedKey: enc)
            let seed = try recipient.open(ciphertext, authenticating: Data(device.deviceID.utf8))
            let totp = TOTP(secret: seed, digits: Int(enrollment.digits), period: Int(enrollment.period))
            func verify(_ code: String) async throws -> TestServer.Answer {
                try await server.form("/totp/verify", [("login_hint", "ada"), ("code", code)], basic: client)
            }
            let code = totp.code(at: server.clock.now)
            let verified = try await verify(code)
            #expect(verified.status == 200 && verified["verified"] as? Bool == true, "\(verified.errorDescription ?? "")")
            #expect(verified["device_id"] as? String == device.deviceID && verified["amr"] as? [String] == ["otp"])
            let replayed = try await verify(code)
            #expect(replayed.status == 400 && replayed.error == "invalid_code")
            let previousStep = totp.code(at: server.clock.now.addingTimeInterval(-30))
            #expect(try await verify(previousStep).error == "invalid_code", "an earlier step after a later one is a replay")
            server.clock.advance(by: 30)
            #expect(try await verify(totp.code(at: server.clock.now.addingTimeInterval(30))).status == 200)
            #expect(try await verify("12345").error == "invalid_request")
        }
    }

    @Test("wrong TOTP codes lock the user's codes after five in a row")
    func totpLockout() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            _ = try await server.enrollFactorDevice(for: try await server.createUser("ada"), totp: true)
            _ = try await server.enrollFactorDevice(for: try await server.createUser("bob"))
            var last: TestServer.Answer?
            for attempt in 0..<5 {
                last = try await server.form("/totp/verify", [("login_hint", "ada"), ("code", String(format: "%06d", attempt))],
                                             basic: client)
            }
            #expect(last?.status == 403 && last?.error == "access_denied" && last?.header("Retry-After") == "900")
            let noSeed = try await server.form("/totp/verify", [("login_hint", "bob"), ("code", "123456")], basic: client)
            #expect(noSeed.status == 403 && noSeed.error == "access_denied")
        }
    }

    @Test("the tenant's policy is read and replaced whole, with each bad member refused by name")
    func policyAdministration() async throws {
        try await TestServer.routed { server in
            let path = "/admin/v1/tenants/default/authentication-policy"
            let defaults = try await server.admin("GET", path)
            #expect(defaults["pin_attempt_limit"] as? Int == 3 && defaults["user_requests_per_minute"] as? Int == 5)
            for (field, value) in [("pin_attempt_limit", 0), ("user_requests_per_minute", -1),
                                   ("not_requested_suppression_seconds", 90000)] as [(String, any Sendable)] {
                let answer = try await server.admin("PUT", path, json: [field: value])
                #expect(answer.status == 400 && answer.errorDescription?.contains(field) == true, "\(field)")
            }
            let badClass = try await server.admin("PUT", path, json: ["minimum_acr": "urn:other"])
            #expect(badClass.status == 400 && badClass.errorDescription?.contains("minimum_acr") == true)
            try await server.setPolicy(["pin_attempt_limit": 5, "totp": false])
            let after = try await server.admin("GET", path)
            #expect(after["pin_attempt_limit"] as? Int == 5 && after["totp"] as? Bool == false)
            #expect(after["user_requests_per_minute"] as? Int == 5, "members left out take their defaults")
        }
    }
}

/// RFC 4226 Appendix D and RFC 6238 Appendix B.
@Suite("One-time passwords")
struct OneTimePasswordTests {
    @Test("HOTP values of RFC 4226 Appendix D")
    func hotpVectors() {
        let totp = TOTP(secret: Data("12345678901234567890".utf8))
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        #expect((0..<10).map { totp.code(step: Int64($0)) } == expected)
    }

    @Test("TOTP values of RFC 6238 Appendix B, each hash with its own seed",
          arguments: [(Int64(59), "94287082", "46119246", "90693936"),
                      (1_111_111_109, "07081804", "68084774", "25091201"),
                      (1_111_111_111, "14050471", "67062674", "99943326"),
                      (1_234_567_890, "89005924", "91819424", "93441116"),
                      (2_000_000_000, "69279037", "90698825", "38618901"),
                      (20_000_000_000, "65353130", "77737706", "47863826")])
    func totpVectors(time: Int64, sha1: String, sha256: String, sha512: String) {
        let date = Date(timeIntervalSince1970: TimeInterval(time))
        let seeds: [(TOTP.Algorithm, String, String)] = [
            (.sha1, "12345678901234567890", sha1),
            (.sha256, "12345678901234567890123456789012", sha256),
            (.sha512, "1234567890123456789012345678901234567890123456789012345678901234", sha512),
        ]
        for (algorithm, seed, code) in seeds {
            #expect(TOTP(secret: Data(seed.utf8), algorithm: algorithm, digits: 8).code(at: date) == code, "\(algorithm)")
        }
    }

    @Test("a code matches its own step and one either side, no further")
    func window() {
        let totp = TOTP(secret: Data("12345678901234567890".utf8))
        let now = Date(timeIntervalSince1970: 1_111_111_111)
        let step = totp.step(at: now)
        #expect(totp.matchingStep(of: totp.code(step: step - 1), at: now) == step - 1)
        #expect(totp.matchingStep(of: totp.code(step: step + 1), at: now) == step + 1)
        #expect(totp.matchingStep(of: totp.code(step: step + 2), at: now) == nil)
        #expect(totp.matchingStep(of: "12345", at: now) == nil)
    }
}
