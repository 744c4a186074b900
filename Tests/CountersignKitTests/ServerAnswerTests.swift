import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignKit

/// How non-2xx answers are read: the protocol's error codes become the SDK's errors.
@Suite struct ServerAnswerTests {
    static func answer(_ status: Int, _ code: String?, location: String? = nil) -> ServerAnswer {
        let body = code.map { Data(#"{"error":"\#($0)","error_description":"why"}"#.utf8) } ?? Data("<html>".utf8)
        return ServerAnswer(status: status, body: body, location: location)
    }

    static let serverKey = P256.Signing.PrivateKey()

    static func deregistration(_ code: String, notice: String?) -> ServerAnswer {
        var body: [String: String] = ["error": code, "error_description": "why"]
        body["deregistration"] = notice
        return ServerAnswer(status: 401, body: try! JSONEncoder().encode(body), location: nil)
    }

    static func notice(device: String = "dev_1", nonce: String = "nonce-of-this-request",
                       key: P256.Signing.PrivateKey = serverKey) throws -> String {
        try DeregistrationNotice(deviceID: device, status: .deleted, requestNonce: nonce, issuedAt: 1_800_000_000)
            .sign(with: key)
    }

    @Test(arguments: ["unknown_device", "device_deregistered"])
    func aForgottenDeviceWithASignedNoticeIsDeregistered(_ code: String) throws {
        let answer = Self.deregistration(code, notice: try Self.notice())
        #expect(answer.deviceRequestFailure(
            serverKey: ECPublicJWK(Self.serverKey.publicKey), deviceID: "dev_1", nonce: "nonce-of-this-request")
            == .deviceDeregistered)
    }

    @Test("a deregistration without a valid notice is not believed",
          arguments: ["none", "another device", "another request", "another key"])
    func anUnsignedDeregistrationIsNotBelieved(_ defect: String) throws {
        let notice: String? = switch defect {
        case "another device": try Self.notice(device: "dev_2")
        case "another request": try Self.notice(nonce: "an-earlier-request-nonce")
        case "another key": try Self.notice(key: P256.Signing.PrivateKey())
        default: nil
        }
        let failure = Self.deregistration("device_deregistered", notice: notice).deviceRequestFailure(
            serverKey: ECPublicJWK(Self.serverKey.publicKey), deviceID: "dev_1", nonce: "nonce-of-this-request")
        guard case .invalidServerResponse = failure else {
            Issue.record("expected invalidServerResponse, got \(failure)")
            return
        }
    }

    @Test(arguments: [
        "missing_signature", "malformed_signature", "invalid_signature", "request_mismatch", "request_expired",
        "replayed_request", "body_mismatch",
    ])
    func anyOtherSignatureFailureIsAServerRefusal(_ code: String) {
        #expect(Self.answer(401, code).deviceRequestFailure(
            serverKey: ECPublicJWK(Self.serverKey.publicKey), deviceID: "dev_1", nonce: "n")
            == .server(status: 401, code: code, description: "why"))
    }

    @Test(arguments: [
        "invalid_request", "invalid_ticket", "ticket_expired", "ticket_used", "invalid_key", "invalid_proof",
        "user_not_active", "payload_too_large",
    ])
    func aClientErrorToAnEnrollmentIsARejection(_ code: String) {
        let status = code == "payload_too_large" ? 413 : 400
        #expect(Self.answer(status, code).enrollmentFailure == .enrollmentRejected(code: code, description: "why"))
    }

    @Test func aServerErrorToAnEnrollmentIsNotARejection() {
        #expect(Self.answer(500, "server_error").enrollmentFailure == .server(status: 500, code: "server_error", description: "why"))
    }

    @Test(arguments: [502, 503, 504])
    func aGatewayWithoutAnErrorBodyMeansTheServerIsNotReachable(_ status: Int) {
        #expect(Self.answer(status, nil).failure == .serverNotReachable)
    }

    @Test func aRedirectIsNotFollowedButReported() {
        let failure = Self.answer(301, nil, location: "https://elsewhere.example.com/device/v1/self").failure
        guard case .invalidServerResponse(let why) = failure else {
            Issue.record("expected invalidServerResponse, got \(failure)")
            return
        }
        #expect(why.contains("https://elsewhere.example.com"))
    }

    @Test func anErrorWithoutAProtocolBodyIsAnInvalidServerResponse() {
        guard case .invalidServerResponse = Self.answer(404, nil).failure else {
            Issue.record("expected invalidServerResponse")
            return
        }
    }
}
