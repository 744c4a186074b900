import CountersignKit
import CountersignWebAuthn
import Foundation
import Synchronization
import Testing

/// The UV flag: set only when the device's verification ran and passed, asked as the relying
/// party's `userVerification` says; and the two verifiers the Kit provides.
@Suite struct PasskeyVerificationTests {
    typealias Fixtures = PasskeyFixtures

    static func flags(
        _ store: FilePasskeyStore, verifier: (any PasskeyUserVerifier)?, userVerification: String
    ) async throws -> AuthenticatorFlags {
        let authenticator = PasskeyAuthenticator(store: store, userVerifier: verifier)
        let response = try await authenticator.register(
            Fixtures.creationOptions(userVerification: userVerification), origin: Fixtures.origin)
        return try AuthenticatorData(parsing: try #require(response.response.authenticatorData).bytes).flags
    }

    @Test(arguments: ["required", "preferred"])
    func aPassedVerificationSetsUV(_ requirement: String) async throws {
        try await withPasskeyStore { store in
            let verifier = StubVerifier(.verified)
            let flags = try await Self.flags(store, verifier: verifier, userVerification: requirement)
            #expect(flags.contains(.userVerified))
            let assertion = try await PasskeyAuthenticator(store: store, userVerifier: verifier)
                .signIn(Fixtures.requestOptions(userVerification: requirement), origin: Fixtures.origin)
            #expect(try AuthenticatorData(parsing: assertion.response.authenticatorData.bytes).flags == [.userPresent, .userVerified])
        }
    }

    @Test func discouragedVerificationIsNeverAsked() async throws {
        try await withPasskeyStore { store in
            let verifier = StubVerifier(.verified)
            let flags = try await Self.flags(store, verifier: verifier, userVerification: "discouraged")
            #expect(flags == [.userPresent, .attestedCredentialData])
            #expect(verifier.timesAsked == 0)
        }
    }

    @Test func anUnavailableVerifierLeavesUVClearWhenOnlyPreferred() async throws {
        try await withPasskeyStore { store in
            let flags = try await Self.flags(store, verifier: StubVerifier(.unavailable), userVerification: "preferred")
            #expect(flags == [.userPresent, .attestedCredentialData])
            await #expect(throws: PasskeyAuthenticatorError.userVerificationUnavailable) {
                _ = try await Self.flags(store, verifier: StubVerifier(.unavailable), userVerification: "required")
            }
        }
    }

    @Test(arguments: [
        (PasskeyUserVerification.failed, PasskeyAuthenticatorError.userVerificationFailed),
        (.cancelled, .cancelled),
    ])
    func aFailedOrCancelledVerificationRefusesAndStoresNothing(
        _ outcome: PasskeyUserVerification, _ expected: PasskeyAuthenticatorError
    ) async throws {
        try await withPasskeyStore { store in
            await #expect(throws: expected) {
                _ = try await Self.flags(store, verifier: StubVerifier(outcome), userVerification: "preferred")
            }
            let stored = try await store.credentials(rpID: nil)
            #expect(stored.isEmpty)
        }
    }

    // MARK: - Biometric

    @Test func theBiometricVerifierPassesOnlyWhenTheBiometricKeySigns() async {
        let request = PasskeyVerificationRequest(ceremony: .signIn, rpID: "example.org", userName: "alice")
        let prompts = Mutex<[String]>([])
        let passing = BiometricPasskeyVerifier(keys: SoftwareBiometricKeys { prompt in
            prompts.withLock { $0.append(prompt) }
            return .verified
        })
        #expect(await passing.verifyUser(request) == .verified)
        #expect(prompts.withLock { $0 } == ["Sign in to example.org as alice"])
        #expect(await BiometricPasskeyVerifier(keys: SoftwareBiometricKeys { _ in .failed }).verifyUser(request) == .failed)
        #expect(await BiometricPasskeyVerifier(keys: SoftwareBiometricKeys { _ in .cancelled }).verifyUser(request) == .cancelled)
        #expect(await BiometricPasskeyVerifier(keys: SoftwareBiometricKeys { _ in .unavailable }).verifyUser(request) == .unavailable)
    }

    @Test func aBiometricKeyThatSignsWithAnotherKeyIsNotAVerification() async throws {
        let keys = SoftwareBiometricKeys { _ in .verified }
        let enrolled = try await keys.createKey()
        let other = try await keys.createKey()
        let mismatched = BiometricKey(publicKey: other.publicKey, handle: enrolled.handle)
        let request = PasskeyVerificationRequest(ceremony: .signIn, rpID: "example.org", userName: "alice")
        #expect(await BiometricPasskeyVerifier(keys: keys, key: enrolled).verifyUser(request) == .verified)
        #expect(await BiometricPasskeyVerifier(keys: keys, key: mismatched).verifyUser(request) == .failed)
    }

    // MARK: - PIN

    /// PINs typed in turn; nil once they run out, which cancels.
    final class TypedPINs: Sendable {
        private let remaining: Mutex<[String]>
        private let prompts = Mutex<[PINPasskeyVerifier.Prompt]>([])

        init(_ pins: [String]) {
            remaining = Mutex(pins)
        }

        var seen: [PINPasskeyVerifier.Prompt] { prompts.withLock { $0 } }

        func next(_ prompt: PINPasskeyVerifier.Prompt) -> String? {
            prompts.withLock { $0.append(prompt) }
            return remaining.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        }
    }

    final class Clock: Sendable {
        let date = Mutex(Date(timeIntervalSince1970: 1_741_944_413))
        func now() -> Date { date.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    static let request = PasskeyVerificationRequest(ceremony: .signIn, rpID: "example.org", userName: "alice")

    @Test func aPINVerifierWithoutAPINIsUnavailable() async throws {
        try await withPasskeyStore { store in
            let verifier = PINPasskeyVerifier(store: store) { _ in "4921" }
            #expect(await verifier.verifyUser(Self.request) == .unavailable)
            await #expect(throws: PasskeyAuthenticatorError.invalidPIN) { try await verifier.setPIN("12a4", current: nil) }
        }
    }

    @Test func theRightPINVerifiesAfterAWrongOneIsAskedAgain() async throws {
        try await withPasskeyStore { store in
            let typed = TypedPINs(["0000", "4921"])
            let verifier = PINPasskeyVerifier(store: store) { typed.next($0) }
            try await verifier.setPIN("4921", current: nil)
            #expect(await verifier.verifyUser(Self.request) == .verified)
            #expect(typed.seen.map(\.failedAttempts) == [0, 1])
            #expect(typed.seen.first?.request == Self.request)
        }
    }

    @Test func wrongPINsBeyondTheFreeOnesWaitAndTheCountOutlivesTheVerifier() async throws {
        try await withPasskeyStore { store in
            let clock = Clock()
            let wrong = TypedPINs(["1111", "2222", "3333"])
            let first = PINPasskeyVerifier(store: store, now: { clock.now() }) { wrong.next($0) }
            try await first.setPIN("4921", current: nil)
            #expect(await first.verifyUser(Self.request) == .failed)
            #expect(wrong.seen.count == 3, "the third wrong PIN starts a wait, so no fourth is asked")

            let right = TypedPINs(["4921"])
            let second = PINPasskeyVerifier(store: store, now: { clock.now() }) { right.next($0) }
            #expect(await second.verifyUser(Self.request) == .unavailable)
            #expect(right.seen.isEmpty)
            clock.advance(31)
            #expect(await second.verifyUser(Self.request) == .verified)
            #expect(right.seen.map(\.failedAttempts) == [3])
        }
    }

    @Test func changingThePINNeedsTheCurrentOne() async throws {
        try await withPasskeyStore { store in
            let verifier = PINPasskeyVerifier(store: store) { _ in "123456" }
            try await verifier.setPIN("4921", current: nil)
            await #expect(throws: PasskeyAuthenticatorError.userVerificationFailed) { try await verifier.setPIN("123456", current: "0000") }
            await #expect(throws: PasskeyAuthenticatorError.userVerificationFailed) { try await verifier.setPIN("123456", current: nil) }
            try await verifier.setPIN("123456", current: "4921")
            #expect(await verifier.verifyUser(Self.request) == .verified)
        }
    }
}
