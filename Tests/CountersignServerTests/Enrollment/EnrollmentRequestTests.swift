import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// Bad enrollment requests, sent by hand: each gets its precise error, and the ticket is left
/// unused — the same ticket then enrolls a well-formed request.
@Suite("Enrollment requests")
struct EnrollmentRequestTests {
    /// What to break in an otherwise valid request.
    enum Defect: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case notAJWS, wrongType, signedByAnotherKey, signingKeyNotTheHeaderKey, headerKeyMissing, encryptionKeyOffCurve
        case emptyDeviceName, controlCharacterInName, wrongAudience, staleIssuedAt, unknownTicket, emptyPushToken
        case missingTicketField, unknownPlatform

        var testDescription: String { rawValue }

        var expected: (status: Int, error: String) {
            switch self {
            case .notAJWS, .wrongType, .signedByAnotherKey, .signingKeyNotTheHeaderKey, .headerKeyMissing, .staleIssuedAt:
                (400, "invalid_proof")
            case .encryptionKeyOffCurve: (400, "invalid_key")
            case .unknownTicket: (400, "invalid_ticket")
            case .emptyDeviceName, .controlCharacterInName, .wrongAudience, .emptyPushToken, .missingTicketField, .unknownPlatform:
                (400, "invalid_request")
            }
        }
    }

    static func request(ticket: String, audience: String, now: Date, defect: Defect?) throws -> String {
        let key = P256.Signing.PrivateKey()
        let other = P256.Signing.PrivateKey()
        let agreement = P256.KeyAgreement.PrivateKey()
        var payload: [String: JSONValue] = [
            "ticket": .string(defect == .unknownTicket ? "cst_unknown" : ticket),
            "aud": .string(defect == .wrongAudience ? "https://elsewhere.example" : audience),
            "iat": .integer(Int64(now.timeIntervalSince1970) - (defect == .staleIssuedAt ? 3600 : 0)),
            "device_name": .string(defect == .emptyDeviceName ? "  " : defect == .controlCharacterInName ? "a\u{7}b" : "phone"),
            "platform": .string(defect == .unknownPlatform ? "palmos" : "android"),
            "signing_key": try JSONValue(encoding: ECPublicJWK(defect == .signingKeyNotTheHeaderKey ? other.publicKey : key.publicKey)),
            "encryption_key": try JSONValue(encoding: ECPublicJWK(agreement.publicKey)),
        ]
        if defect == .encryptionKeyOffCurve {
            let zero = Data(repeating: 0, count: 32).base64URLEncodedString
            payload["encryption_key"] = .object(["kty": .string("EC"), "crv": .string("P-256"), "x": .string(zero), "y": .string(zero)])
        }
        if defect == .emptyPushToken { payload["push"] = .object(["provider": .string("fcm"), "token": .string("")]) }
        if defect == .missingTicketField { payload["ticket"] = nil }
        if defect == .notAJWS { return "not.a.jws" }
        var header: [String: JSONValue] = [
            "typ": .string(defect == .wrongType ? "JWT" : EnrollmentRequest.type),
            "jwk": try JSONValue(encoding: ECPublicJWK(key.publicKey)),
        ]
        if defect == .headerKeyMissing { header["jwk"] = nil }
        let signer: P256.Signing.PrivateKey = defect == .signedByAnotherKey ? other : key
        return try CompactJWS.sign(header: header, payload: JSONValue.object(payload).canonicalData, signer: signer).serialized
    }

    @Test("a malformed enrollment gets its precise error and leaves the ticket unused",
          arguments: Defect.allCases)
    func malformedEnrollmentChangesNothing(defect: Defect) async throws {
        let clock = TestClock()
        try await TestServer.routed(clock: clock) { server in
            let userID = try await server.createUser("dave")
            let uri = try EnrollmentURI(parsing: try await server.enrollmentURI(for: userID))
            let bad = try Self.request(ticket: uri.ticket, audience: server.base, now: clock.now, defect: defect)
            let answer = try await server.call("POST", "/device/v1/enrollments", json: ["enrollment_request": bad])
            #expect(answer.status == defect.expected.status)
            #expect(answer.error == defect.expected.error, "\(answer.errorDescription ?? "")")
            #expect(answer.errorDescription?.isEmpty == false)

            let devices = try await server.admin("GET", "/admin/v1/tenants/default/users/\(userID)/devices")
            #expect((devices["items"] as? [Any])?.isEmpty == true)
            let good = try Self.request(ticket: uri.ticket, audience: server.base, now: clock.now, defect: nil)
            let accepted = try await server.call("POST", "/device/v1/enrollments", json: ["enrollment_request": good])
            #expect(accepted.status == 201, "\(accepted.errorDescription ?? "")")
        }
    }

    @Test("malformed bodies are refused before anything is read")
    func malformedBodies() async throws {
        try await TestServer.routed { server in
            let cases: [(Data, Int, String)] = [
                (Data(), 400, "invalid_request"),
                (Data("{".utf8), 400, "invalid_request"),
                (Data("{}".utf8), 400, "invalid_request"),
                (Data(#"{"enrollment_request": 42}"#.utf8), 400, "invalid_request"),
                (Data(repeating: 0x20, count: 70 * 1024), 413, "payload_too_large"),
            ]
            for (body, status, error) in cases {
                let answer = try await server.call("POST", "/device/v1/enrollments", body: body)
                #expect(answer.status == status)
                #expect(answer.error == error)
            }
            let unknownTenant = try await server.call("POST", "/t/nowhere/device/v1/enrollments", json: ["enrollment_request": "x"])
            #expect(unknownTenant.status == 404)
            #expect(unknownTenant.error == "not_found")
        }
    }
}
