import CountersignKit
import CountersignWebAuthn
import Foundation
import Testing

/// Which credential signs: only the request's RP's, only those `allowCredentials` names, and
/// the one the app's selector chooses by key name (standards checklist §4.7 items 4 and 7).
@Suite struct PasskeySelectionTests {
    typealias Fixtures = PasskeyFixtures

    /// Alice (registered 09:26:53) and Bob (09:27:53) at example.org, Carol (09:28:53) at
    /// other.example; returns their credential IDs in that order.
    static func threeCredentials(_ store: FilePasskeyStore) async throws -> [[UInt8]] {
        let clock = SteppingClock()
        let authenticator = PasskeyAuthenticator(store: store, now: { clock.now() })
        let alice = try await authenticator.register(Fixtures.creationOptions(), origin: Fixtures.origin)
        let bob = try await authenticator.register(
            Fixtures.creationOptions(userHandle: [0xB0], name: "bob", displayName: "Bob"), origin: Fixtures.origin)
        let carol = try await authenticator.register(
            Fixtures.creationOptions(rpID: "other.example", userHandle: [0xC0], name: "carol", displayName: "Carol"),
            origin: "https://other.example")
        return [alice.rawId.bytes, bob.rawId.bytes, carol.rawId.bytes]
    }

    static func signIn(
        _ store: FilePasskeyStore, selector: RecordingSelector?, options: PublicKeyCredentialRequestOptionsJSON = Fixtures.requestOptions(),
        origin: String = Fixtures.origin
    ) async throws(PasskeyAuthenticatorError) -> AuthenticationResponseJSON {
        try await PasskeyAuthenticator(store: store, selector: selector).signIn(options, origin: origin)
    }

    @Test func theSelectorIsOfferedTheRPsKeyNamesOldestFirst() async throws {
        try await withPasskeyStore { store in
            _ = try await Self.threeCredentials(store)
            let selector = RecordingSelector { $0.first }
            _ = try await Self.signIn(store, selector: selector)
            #expect(selector.offers == [["Alice Liddell 2025-03-14 09:26:53", "Bob 2025-03-14 09:27:53"]])
        }
    }

    @Test func theCredentialTheSelectorNamesSignsWithItsUserHandle() async throws {
        try await withPasskeyStore { store in
            let ids = try await Self.threeCredentials(store)
            let assertion = try await Self.signIn(store, selector: RecordingSelector { _ in "Bob 2025-03-14 09:27:53" })
            #expect(assertion.rawId.bytes == ids[1])
            #expect(assertion.response.userHandle?.bytes == [0xB0])
        }
    }

    @Test func aNameTheSelectorWasNotOfferedIsRefused() async throws {
        try await withPasskeyStore { store in
            _ = try await Self.threeCredentials(store)
            await #expect(throws: PasskeyAuthenticatorError.unknownKeyName) {
                _ = try await Self.signIn(store, selector: RecordingSelector { _ in "Bob" })
            }
            await #expect(throws: PasskeyAuthenticatorError.unknownKeyName) {
                _ = try await Self.signIn(store, selector: RecordingSelector { _ in "Carol 2025-03-14 09:28:53" })
            }
        }
    }

    @Test func aSelectorThatAnswersNilCancels() async throws {
        try await withPasskeyStore { store in
            _ = try await Self.threeCredentials(store)
            await #expect(throws: PasskeyAuthenticatorError.cancelled) {
                _ = try await Self.signIn(store, selector: RecordingSelector { _ in nil })
            }
            #expect(try await store.credentials(rpID: nil).allSatisfy { $0.signCount == 0 })
        }
    }

    @Test func withoutASelectorTheNewestCredentialSigns() async throws {
        try await withPasskeyStore { store in
            let ids = try await Self.threeCredentials(store)
            #expect(try await Self.signIn(store, selector: nil).rawId.bytes == ids[1])
        }
    }

    @Test func allowCredentialsLimitsWhatIsOffered() async throws {
        try await withPasskeyStore { store in
            let ids = try await Self.threeCredentials(store)
            let selector = RecordingSelector { $0.first }
            let assertion = try await Self.signIn(store, selector: selector, options: Fixtures.requestOptions(allow: [ids[0], [1, 2, 3]]))
            #expect(selector.offers == [["Alice Liddell 2025-03-14 09:26:53"]])
            #expect(assertion.rawId.bytes == ids[0])
            #expect(try await Self.signIn(store, selector: nil, options: Fixtures.requestOptions(allow: [ids[0]])).rawId.bytes == ids[0])
        }
    }

    @Test func aCredentialOfAnotherRPIsNeverOffered() async throws {
        try await withPasskeyStore { store in
            let ids = try await Self.threeCredentials(store)
            let selector = RecordingSelector { $0.first }
            let assertion = try await Self.signIn(
                store, selector: selector, options: Fixtures.requestOptions(rpID: "other.example"), origin: "https://other.example")
            #expect(selector.offers == [["Carol 2025-03-14 09:28:53"]])
            #expect(assertion.rawId.bytes == ids[2])
            await #expect(throws: PasskeyAuthenticatorError.noCredentials) {
                _ = try await Self.signIn(store, selector: selector, options: Fixtures.requestOptions(allow: [ids[2]]))
            }
        }
    }

    @Test func keyNamesThatWouldCollideAreNumbered() async throws {
        try await withPasskeyStore { store in
            let authenticator = PasskeyAuthenticator(store: store, now: { Fixtures.firstCreation })
            for handle: UInt8 in 1...3 {
                _ = try await authenticator.register(Fixtures.creationOptions(userHandle: [handle]), origin: Fixtures.origin)
            }
            let selector = RecordingSelector { $0.last }
            _ = try await Self.signIn(store, selector: selector)
            #expect(selector.offers == [[
                "Alice Liddell 2025-03-14 09:26:53", "Alice Liddell 2025-03-14 09:26:53 (2)", "Alice Liddell 2025-03-14 09:26:53 (3)",
            ]])
        }
    }

    @Test func anEmptyDisplayNameIsNamedByTheUserName() async throws {
        try await withPasskeyStore { store in
            let authenticator = PasskeyAuthenticator(store: store, now: { Fixtures.firstCreation })
            _ = try await authenticator.register(Fixtures.creationOptions(displayName: ""), origin: Fixtures.origin)
            #expect(try await authenticator.credentials(rpID: "example.org").map(\.keyName) == ["alice 2025-03-14 09:26:53"])
        }
    }
}
