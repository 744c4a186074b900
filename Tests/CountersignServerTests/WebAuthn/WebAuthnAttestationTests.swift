import CountersignCBOR
import CountersignWebAuthn
import Crypto
import Foundation
import Testing
import X509
@testable import CountersignServer

/// The attestation statement formats and attestation trust against the W3C WebAuthn Level 3
/// test vectors (the specification's "Test Vectors" appendix): every registration verifies
/// with its format's attestation type, and every certificate path ends at the vectors' CA.
@Suite("WebAuthn attestation: W3C test vectors")
struct WebAuthnAttestationTests {
    typealias Fixtures = WebAuthnAttestationFixtures

    static let verifyingVectors: [(name: String, kind: VerifiedAttestation.Kind)] = [
        ("none.ES256", .none),
        ("packed-self.ES256", .self),
        ("none.ES256.crossOrigin", .none),
        ("none.ES256.topOrigin", .none),
        ("none.ES256.long-credential-id", .none),
        ("packed.ES256", .basic),
        ("packed.ES384", .basic),
        ("packed.ES512", .basic),
        ("packed.RS256", .basic),
        ("packed.EdDSA", .basic),
        ("tpm.ES256", .attestationCA),
        ("apple.ES256", .anonymizationCA),
    ]

    /// The vectors whose statement carries a certificate path.
    static let attestedVectors = ["packed.ES256", "packed.ES384", "packed.ES512", "packed.RS256", "packed.EdDSA", "tpm.ES256",
                                  "apple.ES256", "fido-u2f.ES256"]

    @Test("the fixture holds every case of the specification's Test Vectors section, in its order")
    func fixtureHoldsEveryVector() throws {
        let vectors = try Fixtures.w3c()
        #expect(vectors.cases.map(\.name) == [
            "none.ES256", "packed-self.ES256", "none.ES256.crossOrigin", "none.ES256.topOrigin",
            "none.ES256.long-credential-id", "packed.ES256", "packed.ES384", "packed.ES512", "packed.RS256", "packed.EdDSA",
            "packed.Ed448", "tpm.ES256", "android-key.ES256", "apple.ES256", "fido-u2f.ES256",
        ])
        #expect(vectors.rp_id == "example.org")
        #expect(try Fixtures.hex(vectors.cases[0].registration.challenge)
            == Fixtures.hex("00c30fb78531c464d2b6771dab8d7b603c01162f2fa486bea70f283ae556e130"))
    }

    @Test("a registration vector's statement verifies with its format's attestation type", arguments: verifyingVectors)
    func vectorVerifies(name: String, kind: VerifiedAttestation.Kind) throws {
        let registration = try Fixtures.w3cRegistration(name)
        let format = try #require(AttestationFormats.all[registration.object.format])
        let verified = try registration.verify(format)
        #expect(verified.format == registration.object.format)
        #expect(verified.kind == kind)
        let x5c = registration.statement.certificates
        #expect(verified.certificateChain == x5c)
    }

    @Test("the fido-u2f vector verifies as basic with its non-zero AAGUID, on which §8.6 sets no rule")
    func fidoU2FVectorVerifies() throws {
        let registration = try Fixtures.w3cRegistration("fido-u2f.ES256")
        #expect(registration.authenticatorData.attestedCredentialData?.aaguid.allSatisfy { $0 == 0 } == false)
        #expect(try registration.verify(FIDOU2FAttestation()).kind == .basic)
    }

    @Test("the Ed448 vector is refused when its credential key is read: Countersign does not verify Ed448")
    func ed448IsUnsupported() throws {
        let object = try Fixtures.hex(try Fixtures.w3cCase("packed.Ed448").registration.attestationObject)
        #expect(throws: WebAuthnFormatError.unsupportedAlgorithm(-53)) { try AttestationObject(parsing: object) }
    }

    @Test("android-key statements parse but have no format to verify them")
    func androidKeyHasNoFormat() throws {
        let registration = try Fixtures.w3cRegistration("android-key.ES256")
        #expect(registration.object.format == "android-key")
        #expect(AttestationFormats.all["android-key"] == nil)
        #expect(Set(AttestationFormats.all.keys) == ["none", "packed", "fido-u2f", "apple", "tpm"])
    }

    @Test("a vector's certificate path is trusted with the vectors' CA as root, and not without it", arguments: attestedVectors)
    func vectorPathEndsAtTheVectorsCA(name: String) async throws {
        let attestation = try Self.verifiedAttestation(name)
        let ca = try Fixtures.w3cAttestationCA()
        #expect(await AttestationTrust(roots: [ca]).isTrusted(attestation, at: Fixtures.w3cDate))
        #expect(await AttestationTrust(roots: []).isTrusted(attestation, at: Fixtures.w3cDate) == false)
        #expect(await AttestationTrust(roots: [try TestAttestationCA().certificate]).isTrusted(attestation, at: Fixtures.w3cDate) == false)
    }

    @Test("a path is judged at the ceremony's time: before the certificates' validity it is not trusted")
    func pathIsJudgedAtTheCeremonysTime() async throws {
        let attestation = try Self.verifiedAttestation("packed.ES256")
        let ca = try Fixtures.w3cAttestationCA()
        #expect(await AttestationTrust(roots: [ca]).isTrusted(attestation, at: Date(timeIntervalSince1970: 1_600_000_000)) == false)
    }

    @Test("the apple vectors chain to the vectors' CA, which Apple's WebAuthn root does not replace")
    func appleVectorIsNotApples() async throws {
        let attestation = try Self.verifiedAttestation("apple.ES256")
        #expect(await AttestationTrust(roots: []).isTrusted(attestation, at: Fixtures.w3cDate) == false)
    }

    @Test("no attestation and self attestation are never trusted, whatever the roots", arguments: ["none.ES256", "packed-self.ES256"])
    func unattestedIsNeverTrusted(name: String) async throws {
        let registration = try Fixtures.w3cRegistration(name)
        let attestation = try registration.verify(try #require(AttestationFormats.all[registration.object.format]))
        #expect(await AttestationTrust(roots: [try Fixtures.w3cAttestationCA()]).isTrusted(attestation, at: Fixtures.w3cDate) == false)
    }

    @Test("a chain that names an unreadable certificate is not trusted")
    func unreadableChainIsNotTrusted() async throws {
        var attestation = try Self.verifiedAttestation("packed.ES256")
        attestation.certificateChain.append([0x30, 0x00])
        #expect(await AttestationTrust(roots: [try Fixtures.w3cAttestationCA()]).isTrusted(attestation, at: Fixtures.w3cDate) == false)
    }

    @Test("the embedded Apple WebAuthn Root CA is Apple's published certificate")
    func appleRootFingerprint() throws {
        let der = try TestAttestationCA.encoded(AppleWebAuthnRoot.certificate)
        let fingerprint = SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(fingerprint == "09:15:DD:5C:07:A2:8D:B5:49:D1:F6:77:BB:5A:75:D4:BF:BE:95:61:A7:73:42:43:27:76:2E:9E:02:F9:BB:29")
    }

    /// A vector's verified attestation.
    static func verifiedAttestation(_ name: String) throws -> VerifiedAttestation {
        let registration = try Fixtures.w3cRegistration(name)
        let format = try #require(AttestationFormats.all[registration.object.format])
        return try registration.verify(format)
    }
}
