import CountersignCBOR
import CountersignWebAuthn
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// One tampered registration per verification step of WebAuthn Level 3 §7.1: each must fail
/// with the error of that step, and the untampered one must pass.
@Suite struct WebAuthnRegistrationRejectionTests {
    typealias Parts = WebAuthnTestAuthenticator.Parts

    struct Tamper: Sendable, CustomTestStringConvertible {
        let name: String
        let expected: WebAuthnError
        let change: @Sendable (inout Parts) -> Void
        var testDescription: String { name }
    }

    static let challenge = Array(Secrets.randomBytes(32))

    static func verify(
        _ response: RegistrationResponseJSON, relyingParty: RelyingParty = WebAuthnTestAuthenticator.relyingParty(),
        algorithms: [COSEAlgorithm] = [.es256, .edDSA, .rs256], userVerification: UserVerificationRequirement = .preferred
    ) async throws(WebAuthnError) -> RegisteredCredential {
        try await RegistrationCeremony(relyingParty: relyingParty).verify(
            response, expecting: .init(challenge: challenge, algorithms: algorithms, userVerification: userVerification),
            at: Date())
    }

    static let tampers: [Tamper] = [
        Tamper(name: "type is not public-key", expected: .malformedResponse("type must be \"public-key\"")) {
            $0.credentialType = "public-keys"
        },
        Tamper(name: "id is not rawId in base64url", expected: .malformedResponse("id is not the base64url of rawId")) {
            $0.id = "AAAA"
        },
        Tamper(name: "clientDataJSON is not JSON", expected: .format(.clientDataNotJSON)) {
            $0.clientDataJSON = Array("not json".utf8)
        },
        Tamper(name: "clientDataJSON lacks origin", expected: .format(.clientDataMember("origin"))) {
            $0.clientDataJSON = Array(#"{"type":"webauthn.create","challenge":"AAAA"}"#.utf8)
        },
        Tamper(name: "C.type is webauthn.get", expected: .wrongCeremonyType("webauthn.get")) {
            $0.type = CollectedClientData.getType
        },
        Tamper(name: "C.challenge is another challenge", expected: .challengeMismatch) {
            $0.challenge = Array(Secrets.randomBytes(32))
        },
        Tamper(name: "C.challenge is not base64url", expected: .challengeMismatch) {
            $0.clientDataJSON = Array(#"{"type":"webauthn.create","challenge":"a+b/","origin":"https://example.org"}"#.utf8)
        },
        Tamper(name: "C.challenge is empty", expected: .challengeMismatch) {
            $0.challenge = []
        },
        Tamper(name: "C.origin is another origin", expected: .originNotAllowed("https://example.org.evil.test")) {
            $0.origin = "https://example.org.evil.test"
        },
        Tamper(name: "C.origin differs in scheme", expected: .originNotAllowed("http://example.org")) {
            $0.origin = "http://example.org"
        },
        Tamper(name: "C.crossOrigin is true", expected: .crossOriginNotAllowed("crossOrigin is true")) {
            $0.crossOrigin = true
        },
        Tamper(name: "C.topOrigin is present",
               expected: .crossOriginNotAllowed("top-level origin https://example.com is not allowed")) {
            $0.crossOrigin = true
            $0.topOrigin = "https://example.com"
        },
        Tamper(name: "attestationObject is not CBOR",
               expected: .format(.cbor(.lengthLimitExceeded(offset: 0), part: "attestationObject"))) {
            $0.attestationObject = [0xA3]
        },
        Tamper(name: "attestationObject lacks fmt", expected: .format(.attestationObjectMember("fmt"))) {
            $0.attestationObject = CBOREncoder.encode(.map(CBORMap([
                .init(key: .text("attStmt"), value: .map(CBORMap())), .init(key: .text("authData"), value: .bytes([1])),
            ])))
        },
        Tamper(name: "authData is empty", expected: .format(.attestationObjectMember("authData"))) {
            $0.attestationObject = CBOREncoder.encode(.map(CBORMap([
                .init(key: .text("fmt"), value: .text("none")), .init(key: .text("attStmt"), value: .map(CBORMap())),
                .init(key: .text("authData"), value: .bytes([])),
            ])))
        },
        Tamper(name: "rpIdHash is of another RP ID", expected: .rpIDHashMismatch) {
            $0.rpIDHash = Array(SHA256.hash(data: Array("evil.test".utf8)))
        },
        Tamper(name: "UP is clear", expected: .userNotPresent) {
            $0.flags.remove(.userPresent)
        },
        Tamper(name: "BS is set while BE is clear", expected: .invalidBackupFlags("BS is set while BE is clear")) {
            $0.flags.insert(.backupState)
        },
        Tamper(name: "AT is clear",
               expected: .attestedCredentialData("the AT flag is clear: no credential was attested")) {
            $0.flags.remove(.attestedCredentialData)
        },
        Tamper(name: "bytes follow the credential key", expected: .format(.leftoverBytes)) { parts in
            let attested = AttestedCredentialData(
                aaguid: Array(repeating: 0, count: 16), credentialID: parts.credentialID, publicKey: parts.publicKey)
            parts.authenticatorData = WebAuthnTestAuthenticator.authenticatorData(
                rpIDHash: parts.rpIDHash, flags: parts.flags, signCount: 0, attested: attested) + [0x00]
        },
        Tamper(name: "fmt is unknown (case matters)", expected: .unsupportedAttestationFormat("Packed")) {
            $0.format = "Packed"
        },
        Tamper(name: "none with a statement", expected: .invalidAttestation("a none attestation statement must be empty")) {
            $0.statement = { _, _ in CBORMap([.init(key: .text("alg"), value: .init(-7))]) }
        },
        Tamper(name: "credential ID of 1024 bytes", expected: .credentialIDTooLong) {
            $0.credentialID = Array(repeating: 7, count: 1024)
            $0.rawID = $0.credentialID
        },
        Tamper(name: "credential ID is not rawId", expected: .credentialIDMismatch) {
            $0.rawID = Array(Secrets.randomBytes(32))
        },
    ]

    @Test func untamperedRegistrationPasses() async throws {
        let authenticator = WebAuthnTestAuthenticator()
        let registered = try await Self.verify(authenticator.registration(challenge: Self.challenge))
        #expect(registered.credentialID == authenticator.credentialID)
        #expect(registered.publicKey == COSEKey(p256: authenticator.key.publicKey))
        #expect(registered.userVerified)
        #expect(!registered.backupEligible && !registered.backupState)
        #expect(registered.attestation.kind == .none)
    }

    @Test(arguments: tampers) func tamperedRegistrationFails(_ tamper: Tamper) async throws {
        let authenticator = WebAuthnTestAuthenticator()
        await #expect(throws: tamper.expected) {
            try await Self.verify(authenticator.registration(challenge: Self.challenge, tamper.change))
        }
    }

    @Test func userVerificationRequiredRefusesUVClear() async throws {
        let response = WebAuthnTestAuthenticator().registration(challenge: Self.challenge) { $0.flags.remove(.userVerified) }
        await #expect(throws: WebAuthnError.userNotVerified) {
            try await Self.verify(response, userVerification: .required)
        }
        // Preferred: the missing UV is only recorded.
        let registered = try await Self.verify(response, userVerification: .preferred)
        #expect(!registered.userVerified)
    }

    @Test func algorithmNotOfferedIsRefused() async throws {
        let response = WebAuthnTestAuthenticator().registration(challenge: Self.challenge)
        await #expect(throws: WebAuthnError.algorithmNotAllowed(-7)) {
            try await Self.verify(response, algorithms: [.edDSA, .rs256])
        }
    }

    @Test func credentialIDOf1023BytesIsAccepted() async throws {
        var authenticator = WebAuthnTestAuthenticator()
        authenticator.credentialID = Array(repeating: 9, count: 1023)
        let registered = try await Self.verify(authenticator.registration(challenge: Self.challenge))
        #expect(registered.credentialID.count == 1023)
    }

    @Test func packedSelfAttestationWithABadSignatureFails() async throws {
        let authenticator = WebAuthnTestAuthenticator()
        let good = authenticator.registration(challenge: Self.challenge) {
            $0.format = "packed"
            $0.statement = authenticator.packedSelf
        }
        #expect(try await Self.verify(good).attestation.kind == .self)
        let other = WebAuthnTestAuthenticator()
        let bad = authenticator.registration(challenge: Self.challenge) {
            $0.format = "packed"
            $0.statement = other.packedSelf
        }
        await #expect {
            try await Self.verify(bad)
        } throws: { error in
            guard case WebAuthnError.invalidAttestation = error else { return false }
            return true
        }
    }

    @Test func unattestedAuthenticatorsAreRefusedWhenTheTenantSaysSo() async throws {
        let relyingParty = WebAuthnTestAuthenticator.relyingParty(allowUnattested: false)
        let none = WebAuthnTestAuthenticator().registration(challenge: Self.challenge)
        await #expect(throws: WebAuthnError.attestationNotTrusted("the authenticator sent no attestation")) {
            try await Self.verify(none, relyingParty: relyingParty)
        }
        let authenticator = WebAuthnTestAuthenticator()
        let selfAttested = authenticator.registration(challenge: Self.challenge) {
            $0.format = "packed"
            $0.statement = authenticator.packedSelf
        }
        await #expect(throws: WebAuthnError.attestationNotTrusted("the authenticator attested only with its own key")) {
            try await Self.verify(selfAttested, relyingParty: relyingParty)
        }
    }

    @Test func iframeCeremoniesPassWhereTheTopOriginIsAllowed() async throws {
        let relyingParty = WebAuthnTestAuthenticator.relyingParty(topOrigins: ["https://example.com"])
        let response = WebAuthnTestAuthenticator().registration(challenge: Self.challenge) {
            $0.crossOrigin = true
            $0.topOrigin = "https://example.com"
        }
        _ = try await Self.verify(response, relyingParty: relyingParty)
        let elsewhere = WebAuthnTestAuthenticator().registration(challenge: Self.challenge) {
            $0.crossOrigin = true
            $0.topOrigin = "https://evil.test"
        }
        await #expect(throws: WebAuthnError.crossOriginNotAllowed("top-level origin https://evil.test is not allowed")) {
            try await Self.verify(elsewhere, relyingParty: relyingParty)
        }
    }
}
