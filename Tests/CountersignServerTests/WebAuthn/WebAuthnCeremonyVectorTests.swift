import CountersignWebAuthn
import Foundation
import Testing
import X509
@testable import CountersignServer

/// The W3C WebAuthn Level 3 test vectors through both ceremonies: each registration verifies
/// with its challenge, then the authentication made with the same credential verifies against
/// the stored record. The iframe cases pass only where the relying party expects an iframe,
/// and the formats and algorithms Countersign does not verify are refused by name.
@Suite struct WebAuthnCeremonyVectorTests {
    typealias Fixtures = WebAuthnAttestationFixtures

    struct Vectors: Decodable {
        struct Case: Decodable {
            struct Registration: Decodable {
                var challenge: String
                var clientDataJSON: String
                var attestationObject: String
            }
            struct Authentication: Decodable {
                var challenge: String
                var clientDataJSON: String
                var authenticatorData: String
                var signature: String
            }
            var name: String
            var registration: Registration
            var authentication: Authentication
        }
        var cases: [Case]
    }

    static let vectors: Vectors = {
        let url = Fixtures.folder.appending(path: "w3c-test-vectors.json")
        return try! JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }()

    static let verified = [
        "none.ES256", "packed-self.ES256", "none.ES256.long-credential-id", "packed.ES256", "packed.ES384", "packed.ES512",
        "packed.RS256", "packed.EdDSA", "tpm.ES256", "apple.ES256", "fido-u2f.ES256",
    ]

    static func vector(_ name: String) -> Vectors.Case {
        vectors.cases.first { $0.name == name }!
    }

    static func relyingParty(topOrigins: Set<String> = [], allowUnattested: Bool = true) throws -> RelyingParty {
        var relyingParty = RelyingParty(
            id: "example.org", name: "Example", origins: ["https://example.org"], topOrigins: topOrigins,
            userVerification: .preferred, attestation: .direct, allowUnattested: allowUnattested, signCountRegression: .reject)
        relyingParty.attestationRoots = [try Fixtures.w3cAttestationCA()]
        relyingParty.algorithms = COSEAlgorithm.allCases.filter { $0 != .rs1 }
        return relyingParty
    }

    static func registration(_ vector: Vectors.Case) throws -> (RegistrationResponseJSON, RegistrationCeremony.Expectation) {
        let object = try AttestationObject(parsing: try Fixtures.hex(vector.registration.attestationObject))
        let credentialID = object.authenticatorData.attestedCredentialData!.credentialID
        let response = RegistrationResponseJSON(
            rawId: credentialID,
            response: .init(
                clientDataJSON: Base64URLBytes(try Fixtures.hex(vector.registration.clientDataJSON)),
                attestationObject: Base64URLBytes(try Fixtures.hex(vector.registration.attestationObject))))
        return (response, .init(
            challenge: try Fixtures.hex(vector.registration.challenge), algorithms: COSEAlgorithm.allCases,
            userVerification: .preferred))
    }

    @Test(arguments: verified) func registrationThenAuthenticationVerify(_ name: String) async throws {
        let vector = Self.vector(name)
        let (response, expectation) = try Self.registration(vector)
        let relyingParty = try Self.relyingParty(allowUnattested: name.hasPrefix("none") || name.hasPrefix("packed-self"))
        let registered = try await RegistrationCeremony(relyingParty: relyingParty)
            .verify(response, expecting: expectation, at: Fixtures.w3cDate)
        if !(name.hasPrefix("none") || name.hasPrefix("packed-self")) { #expect(registered.attestationTrusted) }

        let handle: [UInt8] = [1, 2, 3, 4]
        let record = CredentialRecord(
            credentialID: registered.credentialID, userHandle: handle, publicKey: registered.publicKey,
            signCount: registered.signCount, backupEligible: registered.backupEligible)
        let assertion = AuthenticationResponseJSON(
            rawId: registered.credentialID,
            response: .init(
                clientDataJSON: Base64URLBytes(try Fixtures.hex(vector.authentication.clientDataJSON)),
                authenticatorData: Base64URLBytes(try Fixtures.hex(vector.authentication.authenticatorData)),
                signature: Base64URLBytes(try Fixtures.hex(vector.authentication.signature)), userHandle: nil))
        _ = try AuthenticationCeremony(relyingParty: relyingParty).verify(
            assertion,
            expecting: .init(
                challenge: try Fixtures.hex(vector.authentication.challenge), userVerification: .preferred,
                allowCredentials: [registered.credentialID], identifiedUserHandle: handle),
            credential: record)
    }

    @Test func theLongCredentialIDIsExactly1023Bytes() async throws {
        let (response, _) = try Self.registration(Self.vector("none.ES256.long-credential-id"))
        #expect(response.rawId.bytes.count == 1023)
    }

    @Test func attestedVectorsAreUntrustedWithoutTheirRoot() async throws {
        var relyingParty = try Self.relyingParty(allowUnattested: false)
        relyingParty.attestationRoots = []
        let (response, expectation) = try Self.registration(Self.vector("packed.ES256"))
        await #expect(throws: WebAuthnError.attestationNotTrusted("the certificate path ends at no trusted root")) {
            try await RegistrationCeremony(relyingParty: relyingParty).verify(response, expecting: expectation, at: Fixtures.w3cDate)
        }
    }

    @Test func crossOriginVectorPassesOnlyWhereAnIframeIsExpected() async throws {
        let (response, expectation) = try Self.registration(Self.vector("none.ES256.crossOrigin"))
        await #expect(throws: WebAuthnError.crossOriginNotAllowed("crossOrigin is true")) {
            try await RegistrationCeremony(relyingParty: try Self.relyingParty())
                .verify(response, expecting: expectation, at: Fixtures.w3cDate)
        }
        _ = try await RegistrationCeremony(relyingParty: try Self.relyingParty(topOrigins: ["https://example.com"]))
            .verify(response, expecting: expectation, at: Fixtures.w3cDate)
    }

    @Test func topOriginVectorPassesOnlyUnderAnAllowedTopOrigin() async throws {
        let (response, expectation) = try Self.registration(Self.vector("none.ES256.topOrigin"))
        await #expect(throws: WebAuthnError.crossOriginNotAllowed("top-level origin https://example.com is not allowed")) {
            try await RegistrationCeremony(relyingParty: try Self.relyingParty(topOrigins: ["https://example.net"]))
                .verify(response, expecting: expectation, at: Fixtures.w3cDate)
        }
        _ = try await RegistrationCeremony(relyingParty: try Self.relyingParty(topOrigins: ["https://example.com"]))
            .verify(response, expecting: expectation, at: Fixtures.w3cDate)
    }

    @Test func androidKeyAttestationIsRefusedByName() async throws {
        let (response, expectation) = try Self.registration(Self.vector("android-key.ES256"))
        await #expect(throws: WebAuthnError.unsupportedAttestationFormat("android-key")) {
            try await RegistrationCeremony(relyingParty: try Self.relyingParty())
                .verify(response, expecting: expectation, at: Fixtures.w3cDate)
        }
    }

    @Test func ed448CredentialIsRefusedAsUnsupported() async throws {
        let vector = Self.vector("packed.Ed448")
        #expect(throws: WebAuthnFormatError.self) {
            try AttestationObject(parsing: try Fixtures.hex(vector.registration.attestationObject))
        }
    }
}
