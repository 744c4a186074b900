import CountersignWebAuthn
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// One tampered assertion per verification step of WebAuthn Level 3 §7.2: each must fail
/// with the error of that step, and the untampered one must pass.
@Suite struct WebAuthnAuthenticationRejectionTests {
    typealias Parts = WebAuthnTestAuthenticator.Parts

    struct Tamper: Sendable, CustomTestStringConvertible {
        let name: String
        let expected: WebAuthnError
        let change: @Sendable (inout Parts) -> Void
        var testDescription: String { name }
    }

    static let challenge = Array(Secrets.randomBytes(32))

    static func expectation(
        allow: [[UInt8]] = [], identified: [UInt8]? = nil, userVerification: UserVerificationRequirement = .preferred
    ) -> AuthenticationCeremony.Expectation {
        .init(challenge: challenge, userVerification: userVerification, allowCredentials: allow, identifiedUserHandle: identified)
    }

    static func verify(
        _ response: AuthenticationResponseJSON, record: CredentialRecord?,
        expecting expectation: AuthenticationCeremony.Expectation = expectation(),
        relyingParty: RelyingParty = WebAuthnTestAuthenticator.relyingParty()
    ) throws(WebAuthnError) -> VerifiedAssertion {
        try AuthenticationCeremony(relyingParty: relyingParty).verify(response, expecting: expectation, credential: record)
    }

    static let tampers: [Tamper] = [
        Tamper(name: "type is not public-key", expected: .malformedResponse("type must be \"public-key\"")) {
            $0.credentialType = "password"
        },
        Tamper(name: "usernameless without userHandle", expected: .userHandleMissing) {
            $0.userHandle = nil
        },
        Tamper(name: "usernameless with an empty userHandle", expected: .userHandleMissing) {
            $0.userHandle = []
        },
        Tamper(name: "userHandle of another user", expected: .userHandleMismatch) {
            $0.userHandle = Array(Secrets.randomBytes(16))
        },
        Tamper(name: "clientDataJSON is not JSON", expected: .format(.clientDataNotJSON)) {
            $0.clientDataJSON = [0xFF, 0xFE]
        },
        Tamper(name: "C.type is webauthn.create", expected: .wrongCeremonyType("webauthn.create")) {
            $0.type = CollectedClientData.createType
        },
        Tamper(name: "C.challenge is another challenge", expected: .challengeMismatch) {
            $0.challenge = Array(Secrets.randomBytes(32))
        },
        Tamper(name: "C.origin is another origin", expected: .originNotAllowed("https://evil.test")) {
            $0.origin = "https://evil.test"
        },
        Tamper(name: "C.crossOrigin is true", expected: .crossOriginNotAllowed("crossOrigin is true")) {
            $0.crossOrigin = true
        },
        Tamper(name: "rpIdHash is of another RP ID", expected: .rpIDHashMismatch) {
            $0.rpIDHash = Array(SHA256.hash(data: Array("example.com".utf8)))
        },
        Tamper(name: "authenticator data is short", expected: .format(.authenticatorDataTooShort)) {
            $0.authenticatorData = Array(repeating: 0, count: 36)
        },
        Tamper(name: "bytes follow the counter", expected: .format(.leftoverBytes)) { parts in
            parts.authenticatorData = WebAuthnTestAuthenticator.authenticatorData(
                rpIDHash: parts.rpIDHash, flags: parts.flags, signCount: 0, attested: nil) + [0]
        },
        Tamper(name: "UP is clear", expected: .userNotPresent) {
            $0.flags.remove(.userPresent)
        },
        Tamper(name: "BS is set while BE is clear", expected: .invalidBackupFlags("BS is set while BE is clear")) {
            $0.flags.insert(.backupState)
        },
        Tamper(name: "BE differs from the record", expected: .invalidBackupFlags("BE differs from the registered credential's")) {
            $0.flags.insert(.backupEligible)
        },
        Tamper(name: "AT is set in an assertion",
               expected: .attestedCredentialData("an assertion must not carry attested credential data")) { parts in
            let attested = AttestedCredentialData(
                aaguid: Array(repeating: 0, count: 16), credentialID: parts.credentialID, publicKey: parts.publicKey)
            parts.authenticatorData = WebAuthnTestAuthenticator.authenticatorData(
                rpIDHash: parts.rpIDHash, flags: parts.flags.union(.attestedCredentialData), signCount: 0, attested: attested)
        },
        Tamper(name: "a signature bit flipped", expected: .invalidSignature) {
            $0.signature = { signature in
                var flipped = signature
                flipped[flipped.count - 1] ^= 0x01
                return flipped
            }
        },
        Tamper(name: "a raw r||s signature instead of DER", expected: .invalidSignature) {
            $0.signature = { der in Array(try! P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation) }
        },
        Tamper(name: "signed over other client data", expected: .invalidSignature) {
            $0.signature = { _ in Array(try! P256.Signing.PrivateKey().signature(for: [1, 2, 3]).derRepresentation) }
        },
    ]

    @Test func untamperedAssertionPasses() throws {
        let authenticator = WebAuthnTestAuthenticator()
        let verified = try Self.verify(authenticator.assertion(challenge: Self.challenge), record: authenticator.record())
        #expect(verified.userVerified)
        #expect(!verified.signCountRegressed)
    }

    @Test(arguments: tampers) func tamperedAssertionFails(_ tamper: Tamper) {
        let authenticator = WebAuthnTestAuthenticator()
        #expect(throws: tamper.expected) {
            try Self.verify(authenticator.assertion(challenge: Self.challenge, tamper.change), record: authenticator.record())
        }
    }

    @Test func unknownCredentialIsRefused() {
        let authenticator = WebAuthnTestAuthenticator()
        #expect(throws: WebAuthnError.unknownCredential) {
            try Self.verify(authenticator.assertion(challenge: Self.challenge), record: nil)
        }
    }

    @Test func credentialOutsideAllowCredentialsIsRefused() {
        let authenticator = WebAuthnTestAuthenticator()
        #expect(throws: WebAuthnError.credentialNotAllowed) {
            try Self.verify(
                authenticator.assertion(challenge: Self.challenge), record: authenticator.record(),
                expecting: Self.expectation(allow: [Array(Secrets.randomBytes(32))]))
        }
    }

    @Test func identifiedUserMustOwnTheCredential() throws {
        let authenticator = WebAuthnTestAuthenticator()
        let response = authenticator.assertion(challenge: Self.challenge) { $0.userHandle = nil }
        // The user typed their name: no userHandle needed, but the credential must be theirs.
        _ = try Self.verify(
            response, record: authenticator.record(),
            expecting: Self.expectation(allow: [authenticator.credentialID], identified: authenticator.userHandle))
        #expect(throws: WebAuthnError.userHandleMismatch) {
            try Self.verify(
                response, record: authenticator.record(),
                expecting: Self.expectation(allow: [authenticator.credentialID], identified: Array(Secrets.randomBytes(16))))
        }
        let otherHandle = authenticator.assertion(challenge: Self.challenge) { $0.userHandle = Array(Secrets.randomBytes(16)) }
        #expect(throws: WebAuthnError.userHandleMismatch) {
            try Self.verify(
                otherHandle, record: authenticator.record(),
                expecting: Self.expectation(allow: [authenticator.credentialID], identified: authenticator.userHandle))
        }
    }

    @Test func userVerificationRequiredRefusesUVClear() throws {
        let authenticator = WebAuthnTestAuthenticator()
        let response = authenticator.assertion(challenge: Self.challenge) { $0.flags.remove(.userVerified) }
        #expect(throws: WebAuthnError.userNotVerified) {
            try Self.verify(response, record: authenticator.record(), expecting: Self.expectation(userVerification: .required))
        }
        let verified = try Self.verify(response, record: authenticator.record())
        #expect(!verified.userVerified)
    }

    @Test(arguments: [(5, 5), (5, 3), (1, 0)] as [(UInt32, UInt32)])
    func counterThatDoesNotIncreaseIsRefused(stored: UInt32, received: UInt32) {
        let authenticator = WebAuthnTestAuthenticator()
        #expect(throws: WebAuthnError.signCountRegression(stored: stored, received: received)) {
            try Self.verify(
                authenticator.assertion(challenge: Self.challenge) { $0.signCount = received },
                record: authenticator.record(signCount: stored))
        }
    }

    @Test func counterThatDoesNotIncreaseIsFlaggedWhereTheTenantSaysSo() throws {
        let authenticator = WebAuthnTestAuthenticator()
        let verified = try Self.verify(
            authenticator.assertion(challenge: Self.challenge) { $0.signCount = 4 }, record: authenticator.record(signCount: 9),
            relyingParty: WebAuthnTestAuthenticator.relyingParty(signCountRegression: .flag))
        #expect(verified.signCountRegressed)
        #expect(verified.signCount == 9)
    }

    @Test func authenticatorsWithoutACounterPass() throws {
        let authenticator = WebAuthnTestAuthenticator()
        let verified = try Self.verify(authenticator.assertion(challenge: Self.challenge), record: authenticator.record())
        #expect(verified.signCount == 0 && !verified.signCountRegressed)
        let increasing = try Self.verify(
            authenticator.assertion(challenge: Self.challenge) { $0.signCount = 8 }, record: authenticator.record(signCount: 7))
        #expect(increasing.signCount == 8)
    }

    @Test func syncedPasskeyKeepsItsBackupState() throws {
        let authenticator = WebAuthnTestAuthenticator()
        let verified = try Self.verify(
            authenticator.assertion(challenge: Self.challenge) { $0.flags.formUnion([.backupEligible, .backupState]) },
            record: authenticator.record(backupEligible: true))
        #expect(verified.backupState)
    }
}
