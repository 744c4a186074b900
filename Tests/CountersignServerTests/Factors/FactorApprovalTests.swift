import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// The factors end to end: the class a request requires, what the device is told, each
/// factor's proof checked by the server, and what the ID token says was used.
@Suite("Device factors, end to end")
struct FactorApprovalTests {
    /// Approves the newest request with `factors`, polls, and returns the verified ID token's claims.
    private func idToken(_ server: TestServer, _ client: TestClient, _ authReqID: String) async throws -> [String: any Sendable] {
        server.clock.advance(by: 6)
        let tokens = try await server.token(client, authReqID)
        #expect(tokens.status == 200, "\(tokens.error ?? "") \(tokens.errorDescription ?? "")")
        return try server.verifiedClaims(try #require(tokens["id_token"] as? String), keys: try await server.jwks()).claims
    }

    @Test("without acr_values a request requires a tap, and the token says so")
    func confirmByDefault() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID)
            let authReqID = try await server.startApproval(client, user: "ada")
            let (_, details, _) = try await device.newest()
            #expect(details.verification == .init(factor: .confirm))
            let answer = try await device.answer(factors: ["confirm"])
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
            let claims = try await idToken(server, client, authReqID)
            #expect(claims["acr"] as? String == "urn:countersign:acr:confirm")
            #expect(claims["amr"] as? [String] == ["pop", "user"])
        }
    }

    @Test("the class follows acr_values, the client's minimum and the tenant's default")
    func requiredClassSelection() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID, pin: true)
            func required(_ extra: [(String, String)]) async throws -> Factor? {
                _ = try await server.startApproval(client, user: "ada", extra: extra)
                return try await device.newest().details.verification?.factor
            }
            #expect(try await required([("acr_values", "urn:other urn:countersign:acr:pin")]) == .pin)
            #expect(try await required([("acr_values", "urn:other")]) == .confirm)
            try await server.setPolicy(["default_acr": "urn:countersign:acr:number-match", "user_requests_per_minute": 0])
            #expect(try await required([]) == .numberMatch)
            let patched = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(client.id)", json: ["minimum_acr": "urn:countersign:acr:pin"])
            #expect(patched.status == 200, "\(patched.errorDescription ?? "")")
            #expect(try await required([("acr_values", "urn:countersign:acr:confirm")]) == .pin)
            #expect(try await required([("acr_values", "urn:countersign:acr:biometric")]) == .biometric)
        }
    }

    @Test("number matching: the relying party gets the number, the device the choices, the answer must match")
    func numberMatching() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID)
            let extra = [("acr_values", "urn:countersign:acr:number-match")]
            let started = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")] + extra)
            let number = try #require(started["match_number"] as? Int)
            #expect((10...99).contains(number))
            let (_, details, _) = try await device.newest()
            let choices = try #require(details.verification?.numberMatch?.choices)
            #expect(choices.count == 3 && Set(choices).count == 3 && choices.contains(Int64(number)))

            let tapOnly = try await device.answer(factors: ["confirm"])
            #expect(tapOnly.status == 403 && tapOnly.error == "factor_required")
            let right = try await device.answer(factors: ["number_match"], number: Int64(number))
            #expect(right.status == 200 && right["status"] as? String == "approved", "\(right.errorDescription ?? "")")
            let claims = try await idToken(server, client, try #require(started["auth_req_id"] as? String))
            #expect(claims["acr"] as? String == "urn:countersign:acr:number-match")

            let second = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")] + extra)
            let secondNumber = try #require(second["match_number"] as? Int)
            let wrong = try await device.answer(factors: ["number_match"], number: Int64(secondNumber == 99 ? 10 : secondNumber + 1))
            #expect(wrong.status == 200 && wrong["status"] as? String == "denied" && wrong["reason"] as? String == "wrong_number")
            server.clock.advance(by: 6)
            let denied = try await server.token(client, try #require(second["auth_req_id"] as? String))
            #expect(denied.error == "access_denied")
        }
    }

    @Test("number matching without choices when the tenant wants the number typed")
    func numberTyped() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["number_match_choices": false])
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:number-match")])
            let match = try #require(try await device.newest().details.verification?.numberMatch)
            #expect(match.choices == nil && match.digits == 2)
        }
    }

    @Test("a right PIN approves; the token says pin and mfa")
    func rightPIN() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"), pin: true)
            let authReqID = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:pin")])
            let answer = try await device.answer(factors: ["pin"], pinKey: device.pin)
            #expect(answer.status == 200 && answer["status"] as? String == "approved", "\(answer.errorDescription ?? "")")
            let claims = try await idToken(server, client, authReqID)
            #expect(claims["acr"] as? String == "urn:countersign:acr:pin")
            #expect(claims["amr"] as? [String] == ["pop", "pin", "mfa"])
        }
    }

    @Test("a wrong PIN is counted by the server, leaves the request pending, and a right one resets the count")
    func wrongPINCounted() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"), pin: true)
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:pin")])
            let guess = P256.Signing.PrivateKey()
            let first = try await device.answer(factors: ["pin"], pinKey: guess)
            #expect(first.status == 403 && first.error == "wrong_pin" && first["attempts_remaining"] as? Int == 2)
            let second = try await device.answer(factors: ["pin"], pinKey: guess)
            #expect(second["attempts_remaining"] as? Int == 1)
            let right = try await device.answer(factors: ["pin"], pinKey: device.pin)
            #expect(right.status == 200, "\(right.errorDescription ?? "")")
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:pin")])
            let afterReset = try await device.answer(factors: ["pin"], pinKey: guess)
            #expect(afterReset["attempts_remaining"] as? Int == 2)
        }
    }

    @Test("the last wrong PIN removes the enrollment; the device is then told why")
    func pinLimitDeregisters() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["pin_attempt_limit": 2])
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"), pin: true)
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:pin")])
            let guess = P256.Signing.PrivateKey()
            #expect(try await device.answer(factors: ["pin"], pinKey: guess)["attempts_remaining"] as? Int == 1)
            let last = try await device.answer(factors: ["pin"], pinKey: guess)
            #expect(last.status == 403 && last.error == "user_deregistered")
            let after = try await device.call("GET", "/device/v1/self")
            #expect(after.status == 401 && after.error == "device_deregistered")
            let notice = try #require(after["deregistration"] as? String)
            let payload = try JSONDecoder().decode(DeregistrationNotice.self, from: try CompactJWS(parsing: notice).payload)
            #expect(payload.reason == .pinAttemptsExceeded)
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit")
            #expect(String(decoding: audit.data, as: UTF8.self).contains("pin_attempts_exceeded"))
        }
    }

    @Test("a tap does not answer a PIN request, and a PIN proof needs an enrolled PIN key")
    func pinRequirementEnforced() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:pin")])
            let tap = try await device.answer(factors: ["confirm"])
            #expect(tap.status == 403 && tap.error == "factor_required")
            let noKey = try await device.answer(factors: ["pin"], pinKey: P256.Signing.PrivateKey())
            #expect(noKey.status == 400 && noKey.error == "factor_not_enrolled")
            let unsigned = try await device.answer(factors: ["pin"])
            #expect(unsigned.status == 400 && unsigned.error == "invalid_response")
            #expect(try await device.newest().envelope.id.hasPrefix("txn_"))
        }
    }

    @Test("a biometric answer is checked against the biometric key; the token names the kind")
    func biometric() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"), pin: true, biometric: true)
            let authReqID = try await server.startApproval(
                client, user: "ada", extra: [("acr_values", "urn:countersign:acr:biometric")])
            #expect(try await device.newest().details.verification == .init(factor: .biometric, pinFallback: true))
            let forged = try await device.answer(factors: ["biometric"], biometricKey: P256.Signing.PrivateKey())
            #expect(forged.status == 400 && forged.error == "invalid_factor_proof")
            let answer = try await device.answer(factors: ["biometric"], biometry: "face", biometricKey: device.biometric)
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
            let claims = try await idToken(server, client, authReqID)
            #expect(claims["acr"] as? String == "urn:countersign:acr:biometric")
            #expect(claims["amr"] as? [String] == ["pop", "face", "mfa"])
        }
    }

    @Test("a PIN stands in for a biometric check only where the policy allows it")
    func biometricFallback() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"), pin: true, biometric: true)
            let authReqID = try await server.startApproval(
                client, user: "ada", extra: [("acr_values", "urn:countersign:acr:biometric")])
            let fallback = try await device.answer(factors: ["pin"], pinKey: device.pin)
            #expect(fallback.status == 200, "\(fallback.errorDescription ?? "")")
            #expect(try await idToken(server, client, authReqID)["acr"] as? String == "urn:countersign:acr:pin")

            try await server.setPolicy(["biometric_pin_fallback": false])
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:biometric")])
            #expect(try await device.newest().details.verification?.pinFallback == false)
            let refused = try await device.answer(factors: ["pin"], pinKey: device.pin)
            #expect(refused.status == 403 && refused.error == "factor_required")
        }
    }

    @Test("a new PIN key, a key of its own, replaces the old one only with the old PIN")
    func pinChange() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"), pin: true)
            let newPIN = P256.Signing.PrivateKey()
            func change(provedBy key: P256.Signing.PrivateKey) async throws -> TestServer.Answer {
                let jwk = ECPublicJWK(newPIN.publicKey)
                let proof: P256.Signing.ECDSASignature = try key.signature(for: FactorProof.pinChangeMessage(deviceID: device.deviceID, newKey: jwk))
                return try await device.call("PUT", "/device/v1/self/pin", body: try JSONEncoder().encode(
                    PINChange(pinKey: jwk, pinSignature: proof.rawRepresentation.base64URLEncodedString)))
            }
            let reused = ECPublicJWK(device.signing.publicKey)
            let reusedProof: P256.Signing.ECDSASignature = try #require(device.pin).signature(
                for: FactorProof.pinChangeMessage(deviceID: device.deviceID, newKey: reused))
            let sameKey = try await device.call("PUT", "/device/v1/self/pin", body: try JSONEncoder().encode(
                PINChange(pinKey: reused, pinSignature: reusedProof.rawRepresentation.base64URLEncodedString)))
            #expect(sameKey.status == 400 && sameKey.error == "invalid_key")
            let wrong = try await change(provedBy: P256.Signing.PrivateKey())
            #expect(wrong.status == 403 && wrong.error == "wrong_pin" && wrong["attempts_remaining"] as? Int == 2)
            let changed = try await change(provedBy: try #require(device.pin))
            #expect(changed.status == 200, "\(changed.errorDescription ?? "")")
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:pin")])
            #expect(try await device.answer(factors: ["pin"], pinKey: device.pin).error == "wrong_pin")
            #expect(try await device.answer(factors: ["pin"], pinKey: newPIN).status == 200)
        }
    }

    @Test("enrollment refuses a factor key that is no key, or the device key again")
    func badFactorKeys() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("ada")
            let uri = try EnrollmentURI(parsing: try await server.enrollmentURI(for: userID))
            let signing = P256.Signing.PrivateKey()
            let agreement = P256.KeyAgreement.PrivateKey()
            for pinKey in [ECPublicJWK(signing.publicKey), ECPublicJWK(x: "AAAA", y: "AAAA")] {
                let request = EnrollmentRequest(
                    ticket: uri.ticket, audience: uri.server.absoluteString, issuedAt: Int64(server.clock.now.timeIntervalSince1970),
                    deviceName: "phone", platform: .linux, signingKey: ECPublicJWK(signing.publicKey),
                    encryptionKey: ECPublicJWK(agreement.publicKey), push: nil, pinKey: pinKey)
                let proof = try CompactJWS.sign(
                    header: ["typ": .string(EnrollmentRequest.type), "jwk": try JSONValue(encoding: ECPublicJWK(signing.publicKey))],
                    payload: try JSONValue(encoding: request).canonicalData, signer: signing)
                let answer = try await server.call(
                    "POST", "/device/v1/enrollments",
                    body: try JSONEncoder().encode(EnrollmentSubmission(enrollmentRequest: proof.serialized)))
                #expect(answer.status == 400 && answer.error == "invalid_key", "\(answer.errorDescription ?? "")")
            }
        }
    }
}
