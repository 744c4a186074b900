import CountersignCore
import Foundation
import Testing

/// The stable `error` codes and the `{"error": …, "error_description": …}` body they travel in.
@Suite struct DeviceErrorCodeTests {
    static let codes: [DeviceErrorCode] = [
        .invalidRequest, .notFound, .payloadTooLarge, .unsupportedMediaType, .conflict,
        .invalidTicket, .ticketExpired, .ticketUsed, .invalidKey, .invalidProof, .userNotActive,
        .missingSignature, .malformedSignature, .unknownDevice, .deviceDeregistered, .invalidSignature,
        .requestMismatch, .requestExpired, .replayedRequest, .bodyMismatch,
        .invalidToken, .insufficientRights,
    ]
    static let wire = [
        "invalid_request", "not_found", "payload_too_large", "unsupported_media_type", "conflict",
        "invalid_ticket", "ticket_expired", "ticket_used", "invalid_key", "invalid_proof", "user_not_active",
        "missing_signature", "malformed_signature", "unknown_device", "device_deregistered", "invalid_signature",
        "request_mismatch", "request_expired", "replayed_request", "body_mismatch",
        "invalid_token", "insufficient_rights",
    ]

    @Test(arguments: zip(codes, wire))
    func eachCodeHasItsWireString(_ code: DeviceErrorCode, _ text: String) throws {
        #expect(code.rawValue == text)
        #expect(code.description == text)
        #expect(try JSONEncoder().encode(code) == Data("\"\(text)\"".utf8))
        #expect(try JSONDecoder().decode(DeviceErrorCode.self, from: Data("\"\(text)\"".utf8)) == code)
    }

    @Test func codesAreDistinct() {
        #expect(Set(Self.codes).count == Self.codes.count)
    }

    @Test func anErrorBodyUsesTheRFC6749Names() throws {
        let body = ErrorBody(error: "insufficient_rights", errorDescription: "needs devices:write", missingRight: "devices:write")
        #expect(try JSONValue(encoding: body).canonicalString
                == #"{"error":"insufficient_rights","error_description":"needs devices:write","missing_right":"devices:write"}"#)
    }

    @Test func absentFieldsAreOmitted() throws {
        #expect(try JSONValue(encoding: ErrorBody(error: "not_found")).canonicalString == #"{"error":"not_found"}"#)
    }

    @Test func anErrorBodyDecodes() throws {
        let json = #"{"error":"request_expired","error_description":"check the device clock"}"#
        #expect(try JSONDecoder().decode(ErrorBody.self, from: Data(json.utf8))
                == ErrorBody(error: "request_expired", errorDescription: "check the device clock"))
    }
}
