import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignKit

/// Answering requests with the factor they require, against a server that answers in turn.
@Suite struct ChallengeTests {
    typealias Verification = TransactionDetails.Verification

    // MARK: PIN

    @Test func aWrongPINIsAskedAgainWithTheAttemptsRemainingThenTheRightOneApproves() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.refusal(403, "wrong_pin", attemptsRemaining: 2), Replies.acknowledgement("approved")])
            let authenticator = device.authenticator(server)
            let handler = ScriptedHandler(pins: [.pin("1111"), .pin(FactorDevice.pin)])

            let outcome = try await authenticator.respond(
                toDetails: try await device.details(Verification(factor: .pin), with: authenticator), with: handler)
            guard case .approved = outcome else {
                Issue.record("expected approved, got \(outcome)")
                return
            }
            #expect(handler.pinsAsked.map(\.failedAttempts) == [0, 1])
            #expect(handler.pinsAsked.map(\.attemptsRemaining) == [nil, 2])
            #expect(server.submissions.count == 2)
        }
    }

    @Test func thePINKeySignsTheDeviceSignedResponse() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.acknowledgement("approved")])
            let authenticator = device.authenticator(server)
            _ = try await authenticator.respond(
                toDetails: try await device.details(Verification(factor: .pin), with: authenticator),
                with: ScriptedHandler(pins: [.pin(FactorDevice.pin)]))

            let submission = try #require(server.submissions.first)
            #expect(try device.response(of: submission).factors == ["pin"])
            #expect(PINTests.isValid(submission.pinSignature, over: submission.response))
            #expect(submission.biometricSignature == nil)
        }
    }

    @Test func userDeregisteredErasesTheEnrollmentFromTheDevice() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.refusal(403, "user_deregistered"), Replies.deregistered(.pinAttemptsExceeded)])
            let authenticator = device.authenticator(server)
            let details = try await device.details(Verification(factor: .pin), with: authenticator)

            await #expect(throws: CountersignError.userDeregistered) {
                try await authenticator.respond(toDetails: details, with: ScriptedHandler(pins: [.pin("1111")]))
            }
            #expect(try await authenticator.enrollments().isEmpty)
            #expect(contents(of: root).isEmpty)
        }
    }

    @Test func userDeregisteredThatTheServerDoesNotConfirmErasesNothing() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.refusal(403, "user_deregistered"), { _ in .json(200, "{}") }])
            let authenticator = device.authenticator(server)
            let details = try await device.details(Verification(factor: .pin), with: authenticator)

            await #expect(throws: CountersignError.self) {
                try await authenticator.respond(toDetails: details, with: ScriptedHandler(pins: [.pin("1111")]))
            }
            #expect(try await authenticator.enrollments().map(\.id) == [device.device.enrollment.id])
        }
    }

    @Test func cancellingAChallengeDeniesAsCancelledThenThrowsActionCancelled() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.acknowledgement("denied", reason: .cancelled)])
            let authenticator = device.authenticator(server)
            let details = try await device.details(Verification(factor: .pin), with: authenticator)

            await #expect(throws: CountersignError.actionCancelled) {
                try await authenticator.respond(toDetails: details, with: ScriptedHandler(pins: [.cancel]))
            }
            let submission = try #require(server.submissions.first)
            let response = try device.response(of: submission)
            #expect(response.decision == .deny)
            #expect(response.reason == .cancelled)
            #expect(submission.pinSignature == nil)
        }
    }

    @Test func aPINRequestToAnEnrollmentWithoutAPINIsNotHandleable() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root, withPIN: false)
            let server = FakeServer([Replies.acknowledgement("approved")])
            let authenticator = device.authenticator(server)
            let details = try await device.details(Verification(factor: .pin), with: authenticator)
            let handler = ScriptedHandler(pins: [.pin(FactorDevice.pin)])

            await #expect(throws: CountersignError.requestNotHandleable) {
                try await authenticator.respond(toDetails: details, with: handler)
            }
            #expect(handler.challenges.isEmpty)
            #expect(server.requests.isEmpty)
        }
    }

    @Test func approveOnARequestThatRequiresMoreThanAConfirmationSendsNothing() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.acknowledgement("approved")])
            let authenticator = device.authenticator(server)
            let details = try await device.details(Verification(factor: .pin), with: authenticator)

            await #expect(throws: CountersignError.requestNotHandleable) { try await authenticator.approve(details) }
            #expect(server.requests.isEmpty)
        }
    }

    // MARK: Number matching and confirmation

    @Test func theChosenNumberIsInTheSignedResponse() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.acknowledgement("approved")])
            let authenticator = device.authenticator(server)
            let verification = Verification(factor: .numberMatch, numberMatch: NumberMatch(choices: [12, 47, 83]))
            let handler = ScriptedHandler(number: .number(47))

            _ = try await authenticator.respond(toDetails: try await device.details(verification, with: authenticator), with: handler)
            #expect(handler.numbersAsked.map(\.choices) == [[12, 47, 83]])
            let response = try device.response(of: try #require(server.submissions.first))
            #expect(response.number == 47)
            #expect(response.factors == ["number_match"])
        }
    }

    @Test func aWrongNumberIsADenialWithItsReason() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.acknowledgement("denied", reason: .wrongNumber)])
            let authenticator = device.authenticator(server)
            let details = try await device.details(
                Verification(factor: .numberMatch, numberMatch: NumberMatch(choices: nil)), with: authenticator)

            let outcome = try await authenticator.respond(toDetails: details, with: ScriptedHandler(number: .number(12)))
            guard case .denied(.wrongNumber, _) = outcome else {
                Issue.record("expected wrong_number, got \(outcome)")
                return
            }
        }
    }

    @Test func notRequestedIsSignedAsTheReasonOfTheDenial() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.acknowledgement("denied", reason: .notRequested)])
            let authenticator = device.authenticator(server)
            let details = try await device.details(nil, with: authenticator)

            let outcome = try await authenticator.respond(toDetails: details, with: ScriptedHandler(confirmation: .notRequested))
            #expect(outcome == .denied(.notRequested, outcome.acknowledgement))
            #expect(try device.response(of: try #require(server.submissions.first)).reason == .notRequested)
        }
    }

    // MARK: Biometric

    @Test func aPassedBiometricCheckSignsWithTheBiometricKey() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root, withBiometric: true)
            let server = FakeServer([Replies.acknowledgement("approved")])
            let authenticator = device.authenticator(server)
            _ = try await authenticator.respond(
                toDetails: try await device.details(Verification(factor: .biometric), with: authenticator),
                with: ScriptedHandler())

            let submission = try #require(server.submissions.first)
            #expect(try device.response(of: submission).factors == ["biometric"])
            #expect(FactorProof.isValid(
                try #require(submission.biometricSignature),
                of: FactorProof.message(factor: .biometric, response: submission.response),
                by: try #require(device.biometricKey)))
            #expect(submission.pinSignature == nil)
        }
    }

    @Test func aFailedBiometricCheckFallsBackToThePINWhereAllowed() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root, withBiometric: true, verification: .failed)
            let server = FakeServer([Replies.acknowledgement("approved")])
            let authenticator = device.authenticator(server)
            let handler = ScriptedHandler(pins: [.pin(FactorDevice.pin)])
            _ = try await authenticator.respond(
                toDetails: try await device.details(Verification(factor: .biometric, pinFallback: true), with: authenticator),
                with: handler)

            #expect(handler.challenges == ["biometric", "pin"])
            #expect(handler.pinsAsked.map(\.reason) == [.fallback])
            let submission = try #require(server.submissions.first)
            #expect(server.submissions.count == 1)
            #expect(try device.response(of: submission).factors == ["pin"])
            #expect(PINTests.isValid(submission.pinSignature, over: submission.response))
        }
    }

    @Test func aFailedBiometricCheckDoesNotFallBackToThePINWhereNotAllowed() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root, withBiometric: true, verification: .failed)
            let server = FakeServer([Replies.acknowledgement("approved")])
            let authenticator = device.authenticator(server)
            let handler = ScriptedHandler(pins: [.pin(FactorDevice.pin)])
            let details = try await device.details(Verification(factor: .biometric, pinFallback: false), with: authenticator)

            await #expect(throws: CountersignError.biometricFailed) {
                try await authenticator.respond(toDetails: details, with: handler)
            }
            #expect(handler.challenges == ["biometric"])
            #expect(server.requests.isEmpty)
        }
    }

    // MARK: Custom

    @Test func pinFallbackRequiredAsksForThePINAndAnswersWithIt() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.refusal(403, "pin_fallback_required"), Replies.acknowledgement("approved")])
            let authenticator = device.authenticator(server)
            let handler = ScriptedHandler(pins: [.pin(FactorDevice.pin)], custom: .data("otp=918273"))

            let outcome = try await authenticator.respond(
                toDetails: try await device.details(Verification(factor: .custom), with: authenticator), with: handler)
            guard case .approved = outcome else {
                Issue.record("expected approved, got \(outcome)")
                return
            }
            #expect(handler.pinsAsked.map(\.reason) == [.verifierRequested])
            let responses = try server.submissions.map(device.response)
            #expect(responses.map(\.factors) == [["custom"], ["pin"]])
            #expect(responses.first?.customData == "otp=918273")
            #expect(PINTests.isValid(server.submissions.last?.pinSignature, over: server.submissions.last?.response ?? ""))
        }
    }

    @Test func anUnavailableVerifierIsItsOwnError() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.refusal(502, "verifier_unavailable")])
            let authenticator = device.authenticator(server)
            let details = try await device.details(Verification(factor: .custom), with: authenticator)

            await #expect(throws: CountersignError.verifierUnavailable) {
                try await authenticator.respond(toDetails: details, with: ScriptedHandler(custom: .data("otp=918273")))
            }
        }
    }

    @Test func aRejectedCustomAnswerIsADenialWithItsReason() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([Replies.acknowledgement("denied", reason: .customRejected)])
            let authenticator = device.authenticator(server)
            let details = try await device.details(Verification(factor: .custom), with: authenticator)

            let outcome = try await authenticator.respond(toDetails: details, with: ScriptedHandler(custom: .data("otp=1")))
            guard case .denied(.customRejected, _) = outcome else {
                Issue.record("expected custom_rejected, got \(outcome)")
                return
            }
        }
    }
}
