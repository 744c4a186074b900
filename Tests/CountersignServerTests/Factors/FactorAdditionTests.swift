import CountersignCore
import CountersignKit
import Crypto
import Foundation
import Testing
@testable import CountersignServer

@Suite("Adding factors to an enrollment")
struct FactorAdditionTests {
    @Test("a PIN added later through the SDK approves a PIN request, and the next receipt's certificate holds its key")
    func pinAddedLater() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, _) = server.authenticator()
            let userID = try await server.createUser("ada")
            let enrollment = try await kit.enroll(
                uri: try await server.enrollmentURI(for: userID), deviceName: "phone", platform: .linux)
            try await server.setPolicy(["authenticators": ["urn:countersign:acr:pin": [["pin", "number-match"]]]])
            let first = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "ada"), ("acr_values", "urn:countersign:acr:pin")])
            let request = try #require(try await kit.pendingRequests().first)
            await #expect(throws: CountersignError.factorsNotEnrolled([.pin])) {
                try await kit.respond(to: request, with: ScriptedUser())
            }

            let described = try await kit.addFactors(enrollment.id, EnrollmentFactors(pin: "2468"))
            #expect(described.factors == .init(pin: true, biometric: false, totp: false))
            #expect(try await server.storedDevice(enrollment.deviceID)?.certificate == nil, "the certificate is issued again")
            let number = Int64(try #require(first["match_number"] as? Int))
            let outcome = try await kit.respond(
                to: request, with: ScriptedUser(pins: [.pin("2468")], number: { _ in .number(number) }))
            guard case .approved = outcome else { Issue.record("expected approval, got \(outcome)"); return }
            server.clock.advance(by: 6)
            let authReqID = try #require(first["auth_req_id"] as? String)
            #expect(try await server.token(client, authReqID).status == 200)

            let receipt = try await server.form("/bc-authorize/receipt", [("auth_req_id", authReqID)], basic: client)
            let certificate = try #require(receipt["device_certificate"] as? String)
            let claims = try server.verifiedClaims(certificate, keys: try await server.jwks()).claims
            #expect((claims["factor_keys"] as? [String: any Sendable])?["pin"] != nil)
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?action=device.factors_added")
            #expect((audit["items"] as? [[String: any Sendable]])?.count == 1)
        }
    }

    @Test("adding a factor the enrollment has, or none, is refused by the SDK and by the server; nothing changes")
    func refusals() async throws {
        try await TestServer.routed { server in
            let (kit, _) = server.authenticator()
            let userID = try await server.createUser("ada")
            let enrollment = try await kit.enroll(
                uri: try await server.enrollmentURI(for: userID), deviceName: "phone", platform: .linux,
                factors: .init(pin: "2468"))
            await #expect(throws: CountersignError.invalidRequest("this enrollment has a PIN already; change it with changePIN")) {
                try await kit.addFactors(enrollment.id, EnrollmentFactors(pin: "1357"))
            }
            await #expect(throws: CountersignError.invalidRequest("name a factor to add: a PIN or a biometric key")) {
                try await kit.addFactors(enrollment.id, EnrollmentFactors())
            }

            let device = try await server.enrollFactorDevice(for: userID, pin: true)
            func add(_ body: String) async throws -> TestServer.Answer {
                try await device.call("POST", "/device/v1/self/factors", body: Data(body.utf8))
            }
            func jwk(_ key: P256.Signing.PrivateKey) throws -> String {
                try JSONValue(encoding: ECPublicJWK(key.publicKey)).canonicalString
            }
            let fresh = P256.Signing.PrivateKey()
            let cases: [(String, Int, String, String)] = [
                ("{}", 400, "invalid_request", "name at least one factor"),
                ("{\"pin_key\":\(try jwk(fresh))}", 400, "invalid_request", "has a PIN already"),
                ("{\"biometric_key\":\(try jwk(device.signing))}", 400, "invalid_key", "must be a key of its own"),
                ("{\"biometric_key\":\(try jwk(try #require(device.pin)))}", 400, "invalid_key", "must be a key of its own"),
                ("{\"biometric_key\":{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"AA\",\"y\":\"AA\"}}", 400, "invalid_key", "x and y must each be 32 bytes"),
            ]
            for (body, status, error, says) in cases {
                let answer = try await add(body)
                #expect(answer.status == status && answer.error == error, "\(body): \(answer.error ?? "") \(answer.errorDescription ?? "")")
                #expect(says.isEmpty || answer.errorDescription?.contains(says) == true, "\(answer.errorDescription ?? "")")
            }
            #expect(try await server.storedDevice(device.deviceID)?.biometricKey == nil)
            let added = try await add("{\"biometric_key\":\(try jwk(fresh))}")
            #expect(added.status == 200, "\(added.errorDescription ?? "")")
            #expect(try await server.storedDevice(device.deviceID)?.biometricKey == ECPublicJWK(fresh.publicKey))
        }
    }

    @Test("a tenant that requires factors refuses an enrollment that brings fewer, naming them")
    func minimumFactors() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["minimum_factors": 1])
            let userID = try await server.createUser("ada")
            let (answer, device) = try await server.enrollmentAttempt(for: userID)
            #expect(device == nil && answer.status == 400 && answer.error == "invalid_request")
            #expect(answer.errorDescription?.contains("at least 1 of pin_key and biometric_key") == true)
            let (accepted, _) = try await server.enrollmentAttempt(for: userID, biometric: true)
            #expect(accepted.status == 201, "\(accepted.errorDescription ?? "")")
            let outOfRange = try await server.admin(
                "PUT", "/admin/v1/tenants/default/authentication-policy", json: ["minimum_factors": 3])
            #expect(outOfRange.status == 400 && outOfRange.errorDescription?.contains("minimum_factors") == true)
        }
    }

    @Test("the registration ceremony: the picker for registration chooses what to set up, the handler gives a new PIN, then the request is approved")
    func registrationCeremony() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["authenticators": ["urn:countersign:acr:pin": [["biometric", "pin"], ["pin", "number-match"]]]])
            let client = try await server.createClient()
            let hooks = ScriptedHooks(choice: .alternative(1))
            let store = FileKeyStore(root: server.scratch.directory.appendingPathComponent("device-\(UUID().uuidString)"))
            let kit = CountersignAuthenticator(
                keyStore: store, transport: server.transport,
                biometricKeys: SoftwareBiometricKeys(biometry: .face) { _ in .verified }, now: server.clock.function,
                hooks: AuthenticatorHooks(picker: hooks, interstitials: hooks, pickerCeremonies: [.registration]))
            let userID = try await server.createUser("ada")
            _ = try await kit.enroll(uri: try await server.enrollmentURI(for: userID), deviceName: "phone", platform: .linux)
            let started = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "ada"), ("acr_values", "urn:countersign:acr:pin")])
            let details = try await kit.details(for: try #require(try await kit.pendingRequests().first))

            let user = ScriptedUser(pins: [.pin("2468"), .pin("2468")],
                                    number: { _ in .number(Int64(started["match_number"] as? Int ?? 0)) })
            let described = try await kit.enrollFactors(for: details, with: user)
            #expect(described.factors == .init(pin: true, biometric: false, totp: false))
            #expect(hooks.offered.withLock { $0.map { $0.map(\.index) } } == [[1, 0]], "fewest missing first")
            #expect(user.pinChallenges.withLock { $0.map(\.reason) } == [.setUp])
            await #expect(throws: CountersignError.invalidRequest("this enrollment can already approve the request")) {
                try await kit.enrollFactors(for: details, with: user)
            }
            // The picker is for registration only: answering takes the first alternative it can give.
            let outcome = try await kit.respond(toDetails: details, with: user)
            guard case .approved = outcome else { Issue.record("expected approval, got \(outcome)"); return }
            #expect(hooks.offered.withLock { $0.count } == 1)
        }
    }
}

