import CountersignCore
import Foundation
import Testing
@testable import CountersignKit

/// What each refusal of an answer means to the app, and which of them erase the enrollment.
@Suite struct ErrorMappingTests {
    /// One refusal of `POST …/response`, and the error it is thrown as.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let reply: Replies.Reply
        let expected: CountersignError

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "404 unknown_request", reply: Replies.refusal(404, "unknown_request"), expected: .requestNotFound),
        Case(name: "409 already_decided", reply: Replies.refusal(409, "already_decided"), expected: .alreadyAnswered),
        Case(name: "410 approval_expired", reply: Replies.refusal(410, "approval_expired"), expected: .expired),
        Case(name: "403 factor_required", reply: Replies.refusal(403, "factor_required"), expected: .requestNotHandleable),
        Case(name: "400 factor_not_enrolled", reply: Replies.refusal(400, "factor_not_enrolled"),
             expected: .requestNotHandleable),
        Case(name: "502 verifier_unavailable", reply: Replies.refusal(502, "verifier_unavailable"),
             expected: .verifierUnavailable),
        Case(name: "403 wrong_pin", reply: Replies.refusal(403, "wrong_pin", attemptsRemaining: 2),
             expected: .wrongPIN(attemptsRemaining: 2)),
        Case(name: "401 notice pin_attempts_exceeded", reply: Replies.deregistered(.pinAttemptsExceeded),
             expected: .userDeregistered),
        Case(name: "401 notice user_removed", reply: Replies.deregistered(.userRemoved), expected: .userDisenrolled),
        Case(name: "401 notice device_removed", reply: Replies.deregistered(.deviceRemoved), expected: .deviceDeregistered),
        Case(name: "401 notice without a reason", reply: Replies.deregistered(nil), expected: .deviceDeregistered),
        Case(name: "401 unknown_device", reply: Replies.deregistered(nil, code: "unknown_device"), expected: .deviceDeregistered),
        Case(name: "400 details_mismatch", reply: Replies.refusal(400, "details_mismatch"),
             expected: .server(status: 400, code: "details_mismatch", description: nil)),
    ]

    @Test(arguments: cases)
    func aRefusedAnswerIsThrownAs(_ refusal: Case) async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let authenticator = device.authenticator(FakeServer([refusal.reply]))
            let details = try await device.details(nil, with: authenticator)
            await #expect(throws: refusal.expected) { try await authenticator.approve(details) }
        }
    }

    @Test(arguments: [DeregistrationNotice.Reason.pinAttemptsExceeded, .userRemoved, .deviceRemoved])
    func everyRemovalErasesTheEnrollmentsLocalData(_ reason: DeregistrationNotice.Reason) async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root, withBiometric: true)
            let authenticator = device.authenticator(FakeServer([Replies.deregistered(reason)]))
            _ = try? await authenticator.deviceStatus(device.device.enrollment.id)
            #expect(try await authenticator.enrollments().isEmpty)
            #expect(contents(of: root).isEmpty)
        }
    }

    @Test func aRequestForAFactorThisSDKDoesNotKnowIsNotHandleable() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            var details = ApprovalTests.details()
            details.verification = .init(factor: .pin)
            guard case .object(var members) = try JSONValue(encoding: details) else {
                Issue.record("the details are not an object")
                return
            }
            members["verification"] = .object(["factor": .string("voiceprint")])
            let envelope = try ApprovalTests.envelope(to: device.device, plaintext: JSONValue.object(members).canonicalData)
            let authenticator = device.authenticator(FakeServer([Replies.acknowledgement("approved")]))
            await #expect(throws: CountersignError.requestNotHandleable) {
                try await authenticator.details(for: ApprovalRequest(enrollmentID: device.device.enrollment.id, envelope: envelope))
            }
        }
    }
}
