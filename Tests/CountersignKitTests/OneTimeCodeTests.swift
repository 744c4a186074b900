import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignKit

/// The TOTP seed a device receives at enrollment: trusted only as the signed receipt vouches
/// for it, opened with the device's key, and used for codes offline.
@Suite struct OneTimeCodeTests {
    static func enroll(
        in root: URL, fake: FakeEnrollmentServer, seedDelivery: FakeEnrollmentServer.SeedDelivery = .faithful,
        totp: Bool = true
    ) async throws -> (CountersignAuthenticator, Enrollment) {
        let authenticator = CountersignAuthenticator(
            keyStore: FileKeyStore(root: root), transport: fake.transport(seedDelivery: seedDelivery),
            now: { ApprovalTests.now })
        let enrollment = try await authenticator.enroll(
            uri: fake.uri, deviceName: "Ada's terminal", platform: .linux, factors: EnrollmentFactors(totp: totp))
        return (authenticator, enrollment)
    }

    @Test func theSeedTheReceiptVouchesForGivesTheCurrentCode() async throws {
        try await withTemporaryRoot { root in
            let fake = FakeEnrollmentServer()
            let (authenticator, enrollment) = try await Self.enroll(in: root, fake: fake)
            let date = Date(timeIntervalSince1970: 1_800_000_047)

            let current = try await authenticator.oneTimeCode(enrollment.id, at: date)
            #expect(current.code == TOTP(secret: fake.seed).code(at: date))
            #expect(current.validFrom == Date(timeIntervalSince1970: 1_800_000_030))
            #expect(current.validUntil == Date(timeIntervalSince1970: 1_800_000_060))
        }
    }

    @Test func withoutAnAtTheCodeIsTheAuthenticatorsNow() async throws {
        try await withTemporaryRoot { root in
            let fake = FakeEnrollmentServer()
            let (authenticator, enrollment) = try await Self.enroll(in: root, fake: fake)
            #expect(try await authenticator.oneTimeCode(enrollment.id).code == TOTP(secret: fake.seed).code(at: ApprovalTests.now))
        }
    }

    @Test(arguments: [FakeEnrollmentServer.SeedDelivery.tamperedDigest, .sealedForAnotherDevice])
    func aSeedTheReceiptDoesNotVouchForFailsTheEnrollment(_ delivery: FakeEnrollmentServer.SeedDelivery) async throws {
        try await withTemporaryRoot { root in
            let error = await #expect(throws: CountersignError.self) {
                try await Self.enroll(in: root, fake: FakeEnrollmentServer(), seedDelivery: delivery)
            }
            guard case .invalidServerResponse = error else {
                Issue.record("expected invalidServerResponse, got \(String(describing: error))")
                return
            }
            #expect(contents(of: root).isEmpty)
        }
    }

    @Test func theEnrollmentRequestAsksForASeed() async throws {
        try await withTemporaryRoot { root in
            let fake = FakeEnrollmentServer()
            let server = fake.transport()
            let authenticator = CountersignAuthenticator(keyStore: FileKeyStore(root: root), transport: server)
            _ = try await authenticator.enroll(
                uri: fake.uri, deviceName: "Ada's terminal", platform: .linux, factors: EnrollmentFactors(totp: true))
            #expect(try FakeEnrollmentServer.enrollmentRequest(sentTo: server).totp == true)
        }
    }

    @Test func anEnrollmentWithoutASeedHasNoCode() async throws {
        try await withTemporaryRoot { root in
            let (authenticator, enrollment) = try await Self.enroll(in: root, fake: FakeEnrollmentServer(), totp: false)
            await #expect(throws: CountersignError.totpNotEnrolled) { try await authenticator.oneTimeCode(enrollment.id) }
        }
    }

    @Test func theStoredSeedIsListedAmongTheLocalFactors() async throws {
        try await withTemporaryRoot { root in
            let (authenticator, enrollment) = try await Self.enroll(in: root, fake: FakeEnrollmentServer())
            #expect(try await authenticator.localFactors(enrollment.id) == .init(pin: false, biometric: false, totp: true))
        }
    }
}
