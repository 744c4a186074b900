import AuthenticatorAppModel
import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The reference app's messages for what goes wrong, read off errors a real server causes.
@Suite("The reference app's problem messages")
struct AuthenticatorAppModelTests {
    @Test("a second phone enrolling with a used code is told the code was used and to ask for a new one")
    func usedCode() async throws {
        try await TestServer.routed { server in
            let uri = try await server.enrollmentURI(for: try await server.createUser("alice"))
            let (first, _) = server.authenticator()
            let (second, _) = server.authenticator()
            _ = try await first.enroll(uri: uri, deviceName: "first", platform: .ios)
            let error = await #expect(throws: CountersignError.self) {
                try await second.enroll(uri: uri, deviceName: "second", platform: .ios)
            }
            let problem = ProblemMessage(try #require(error))
            #expect(problem.title == "Code already used")
            #expect(problem.nextStep == .askForNewCode)
        }
    }

    @Test("an expired code says so")
    func expiredCode() async throws {
        let clock = TestClock()
        try await TestServer.routed(clock: clock) { server in
            let uri = try await server.enrollmentURI(for: try await server.createUser("alice"))
            clock.advance(by: EnrollmentTicket.defaultLifetime + 1)
            let (device, _) = server.authenticator()
            let error = await #expect(throws: CountersignError.self) {
                try await device.enroll(uri: uri, deviceName: "phone", platform: .ios)
            }
            #expect(ProblemMessage(try #require(error)) == ProblemMessage(
                title: "Code expired", explanation: "This enrollment code has expired.", nextStep: .askForNewCode))
        }
    }

    @Test("a phone the administrator removed is told to enroll again")
    func removedPhone() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("alice")
            let (device, _) = server.authenticator()
            let enrollment = try await device.enroll(uri: try await server.enrollmentURI(for: userID), deviceName: "phone", platform: .ios)
            _ = try await server.admin("DELETE", "/admin/v1/tenants/default/devices/\(enrollment.deviceID)")
            let error = await #expect(throws: CountersignError.self) {
                _ = try await device.pendingRequests(enrollment.id)
            }
            let problem = ProblemMessage(try #require(error))
            #expect(problem.title == "Phone removed from your account")
            #expect(problem.nextStep == .enrollAgain)
        }
    }

    /// Every case of the error, with the associated values an app meets.
    static let everyError: [CountersignError] = [
        .notEnrolled, .deviceDeregistered, .userDeregistered, .userDisenrolled, .serverNotReachable,
        .networkConnectivityFailure, .actionCancelled, .invalidEnrollmentURI("not countersign://"), .invalidDeviceName,
        .invalidRequest("empty push token"), .enrollmentRejected(code: "ticket_revoked", description: nil),
        .enrollmentRejected(code: "something_new", description: nil), .serverKeyMismatch, .invalidServerResponse("no receipt"),
        .server(status: 503, code: "temporarily_unavailable", description: nil),
        .server(status: 401, code: "request_expired", description: nil), .server(status: 500, code: "server_error", description: nil),
        .server(status: 403, code: "insufficient_rights", description: nil), .keyStore("locked"), .invalidRequestDetails("digest"),
        .expired, .alreadyAnswered, .requestNotFound, .requestNotHandleable, .factorsNotEnrolled([.pin, .biometric]),
        .verifierUnavailable, .wrongPIN(attemptsRemaining: 1), .wrongPIN(attemptsRemaining: nil), .biometricFailed,
        .pinNotEnrolled, .totpNotEnrolled,
    ]

    @Test("every error has a title, an explanation in sentences, and a next step", arguments: everyError)
    func everyErrorIsExplained(_ error: CountersignError) {
        let problem = ProblemMessage(error)
        #expect(!problem.title.isEmpty && !problem.title.hasSuffix("."))
        #expect(problem.explanation.hasSuffix("."), "\(problem.explanation)")
        #expect(!problem.nextStep.buttonTitle.isEmpty)
    }

    @Test("the next steps the user can act on")
    func nextSteps() {
        #expect(ProblemMessage(.wrongPIN(attemptsRemaining: 1)).explanation
            == "1 attempt left before this phone is removed from your account.")
        #expect(ProblemMessage(.factorsNotEnrolled([.pin, .biometric])).nextStep == .setUpFactors([.pin, .biometric]))
        #expect(ProblemMessage(.networkConnectivityFailure).nextStep == .tryAgain)
        #expect(ProblemMessage(.server(status: 401, code: "request_expired", description: nil)).title == "Check the phone's clock")
        #expect(ProblemMessage(.invalidEnrollmentURI("x")).nextStep == .scanAgain)
    }
}
