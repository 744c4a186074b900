import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A device built by hand with its factor keys: enrolls over HTTP and answers with whatever
/// factors, numbers and proofs a test wants, including ones the SDK would never send.
struct FactorDevice: Sendable {
    let server: TestServer
    let deviceID: String
    let signing: P256.Signing.PrivateKey
    let agreement: P256.KeyAgreement.PrivateKey
    /// The key derived from the right PIN (any P-256 key stands in for the derivation here).
    let pin: P256.Signing.PrivateKey?
    let biometric: P256.Signing.PrivateKey?
    let totp: TOTPEnrollment?
    let receipt: EnrollmentReceipt

    func call(_ method: String, _ path: String, body: Data = Data()) async throws -> TestServer.Answer {
        try await server.deviceCall(method, path, body: body, deviceID: deviceID, signer: signing)
    }

    /// The newest pending request, opened.
    /// The device's TOTP generator, from the seed sealed to it at enrollment.
    func totpGenerator() throws -> TOTP {
        let enrollment = try #require(totp)
        let (enc, ciphertext) = try enrollment.sealedSeed.parts()
        var recipient = try HPKE.Recipient(
            privateKey: agreement, ciphersuite: HPKESuite.countersign, info: SealedDetails.totpSeedInfo(deviceID: deviceID),
            encapsulatedKey: enc)
        let seed = try recipient.open(ciphertext, authenticating: Data(deviceID.utf8))
        return TOTP(secret: seed, digits: Int(enrollment.digits), period: Int(enrollment.period))
    }

    /// The newest request, once one is in the inbox (for up to a minute).
    func waitForNewest() async throws -> (envelope: PendingRequestEnvelope, details: TransactionDetails, plaintext: Data) {
        for _ in 0..<1200 {
            let answer = try await call("GET", "/device/v1/requests")
            if answer.status == 200,
               (try? Timestamps.decoder().decode(PendingRequestList.self, from: answer.data))?.requests.isEmpty == false {
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await newest()
    }

    func newest() async throws -> (envelope: PendingRequestEnvelope, details: TransactionDetails, plaintext: Data) {
        let answer = try await call("GET", "/device/v1/requests")
        #expect(answer.status == 200, "inbox: \(answer.errorDescription ?? "")")
        let envelope = try #require(try Timestamps.decoder().decode(PendingRequestList.self, from: answer.data).requests.first)
        let (enc, ciphertext) = try envelope.details.parts()
        var recipient = try HPKE.Recipient(
            privateKey: agreement, ciphersuite: HPKESuite.countersign, info: SealedDetails.info(deviceID: deviceID),
            encapsulatedKey: enc)
        let plaintext = try recipient.open(ciphertext, authenticating: SealedDetails.additionalData(requestID: envelope.id))
        return (envelope, try TransactionDetails(canonicalBytes: plaintext), plaintext)
    }

    /// Answers the newest request. `pinKey` / `biometricKey` sign the factor proofs when given.
    func answer(
        _ decision: ApprovalResponse.Decision = .approve, factors: [String], number: Int64? = nil, customData: String? = nil,
        reason: DenyReason? = nil, biometry: String? = nil, pinKey: P256.Signing.PrivateKey? = nil,
        biometricKey: P256.Signing.PrivateKey? = nil, alternative: Int64? = nil
    ) async throws -> TestServer.Answer {
        try await server.send(try await answerRequest(
            decision, factors: factors, number: number, customData: customData, reason: reason, biometry: biometry,
            pinKey: pinKey, biometricKey: biometricKey, alternative: alternative))
    }

    /// The signed call `answer` sends, to send as often as a test wants (a replay).
    func answerRequest(
        _ decision: ApprovalResponse.Decision = .approve, factors: [String], number: Int64? = nil, customData: String? = nil,
        reason: DenyReason? = nil, biometry: String? = nil, pinKey: P256.Signing.PrivateKey? = nil,
        biometricKey: P256.Signing.PrivateKey? = nil, alternative: Int64? = nil
    ) async throws -> URLRequest {
        let (envelope, details, plaintext) = try await newest()
        let response = ApprovalResponse(
            requestID: details.requestID, decision: decision, detailsDigest: TransactionDetails.digest(of: plaintext),
            challenge: details.challenge, factors: factors, issuedAt: Int64(server.clock.now.timeIntervalSince1970),
            reason: reason, number: number, customData: customData, biometry: biometry, alternative: alternative)
        let jws = try response.sign(deviceID: deviceID, signer: signing).serialized
        let submission = ApprovalSubmission(
            response: jws,
            pinSignature: try pinKey.map {
                try $0.signature(for: FactorProof.message(factor: .pin, response: jws)).rawRepresentation.base64URLEncodedString
            },
            biometricSignature: try biometricKey.map {
                try $0.signature(for: FactorProof.message(factor: .biometric, response: jws)).rawRepresentation
                    .base64URLEncodedString
            })
        return try server.deviceRequest("POST", "/device/v1/requests/\(envelope.id)/response",
                                        body: try JSONEncoder().encode(submission), deviceID: deviceID, signer: signing)
    }
}

extension TestServer {
    /// Enrolls a hand-built device for `userID`, with the factor keys asked for.
    func enrollFactorDevice(
        for userID: String, pin: Bool = false, biometric: Bool = false, totp: Bool = false, tenant: String = "default"
    ) async throws -> FactorDevice {
        let (answer, device) = try await enrollmentAttempt(for: userID, pin: pin, biometric: biometric, totp: totp, tenant: tenant)
        #expect(answer.status == 201, "enrollment: \(answer.errorDescription ?? "")")
        return try #require(device)
    }

    /// An enrollment of a hand-built device, sending `xwingKey` as given: the server's answer,
    /// and the device when it was accepted.
    func enrollmentAttempt(
        for userID: String, pin: Bool = false, biometric: Bool = false, totp: Bool = false, tenant: String = "default",
        xwingKey: String? = nil
    ) async throws -> (TestServer.Answer, FactorDevice?) {
        let uri = try EnrollmentURI(parsing: try await enrollmentURI(for: userID, tenant: tenant))
        let signing = P256.Signing.PrivateKey()
        let agreement = P256.KeyAgreement.PrivateKey()
        let pinKey = pin ? P256.Signing.PrivateKey() : nil
        let biometricKey = biometric ? P256.Signing.PrivateKey() : nil
        let request = EnrollmentRequest(
            ticket: uri.ticket, audience: uri.server.absoluteString, issuedAt: Int64(clock.now.timeIntervalSince1970),
            deviceName: "factor device", platform: .linux, signingKey: ECPublicJWK(signing.publicKey),
            encryptionKey: ECPublicJWK(agreement.publicKey), push: nil,
            pinKey: pinKey.map { ECPublicJWK($0.publicKey) }, biometricKey: biometricKey.map { ECPublicJWK($0.publicKey) },
            totp: totp ? true : nil, xwingKey: xwingKey)
        let proof = try CompactJWS.sign(
            header: ["typ": .string(EnrollmentRequest.type), "jwk": try JSONValue(encoding: ECPublicJWK(signing.publicKey))],
            payload: try JSONValue(encoding: request).canonicalData, signer: signing)
        let path = tenant == "default" ? "/device/v1/enrollments" : "/t/\(tenant)/device/v1/enrollments"
        let answer = try await call(
            "POST", path, body: try JSONEncoder().encode(EnrollmentSubmission(enrollmentRequest: proof.serialized)))
        guard answer.status == 201 else { return (answer, nil) }
        let response = try JSONDecoder().decode(EnrollmentResponse.self, from: answer.data)
        let receipt = try JSONDecoder().decode(
            EnrollmentReceipt.self, from: try CompactJWS(parsing: response.enrollmentReceipt).payload)
        return (answer, FactorDevice(server: self, deviceID: receipt.deviceID, signing: signing, agreement: agreement,
                                     pin: pinKey, biometric: biometricKey, totp: response.totp, receipt: receipt))
    }

    /// Replaces the default tenant's authentication policy with the defaults changed by `fields`.
    func setPolicy(_ fields: [String: any Sendable], tenant: String = "default") async throws {
        let answer = try await admin("PUT", "/admin/v1/tenants/\(tenant)/authentication-policy", json: fields)
        #expect(answer.status == 200, "policy: \(answer.errorDescription ?? "")")
    }
}
