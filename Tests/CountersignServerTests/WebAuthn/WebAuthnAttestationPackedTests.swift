import CountersignCBOR
import CountersignWebAuthn
import Crypto
import Foundation
import Testing
import X509
@testable import CountersignServer

/// `packed` and `none` statements with one thing wrong each: a member missing or ill-typed,
/// a signature that does not verify, or an attestation certificate that breaks one rule of
/// §8.2.1 while keeping every other.
@Suite("WebAuthn attestation: packed and none refuse what is wrong")
struct WebAuthnAttestationPackedTests {
    typealias Fixtures = WebAuthnAttestationFixtures

    /// One broken rule of an attestation certificate, and the failure it gives.
    enum LeafFlaw: String, CaseIterable, Sendable {
        case wrongUnit, noCountry, countryNotACode, noOrganization, noCommonName, certificateAuthority, aaguidMismatch,
            aaguidCritical, aaguidNot16Bytes, expired, notYetValid, version1

        var reason: String {
            switch self {
            case .wrongUnit: "the attestation certificate's subject OU is not \"Authenticator Attestation\""
            case .noCountry, .countryNotACode: "the attestation certificate's subject C is not one ISO 3166 country code"
            case .noOrganization: "the attestation certificate's subject has no O"
            case .noCommonName: "the attestation certificate's subject has no CN"
            case .certificateAuthority: "the attestation certificate is a CA certificate"
            case .aaguidMismatch: "the attestation certificate's AAGUID extension does not match the authenticator data's AAGUID"
            case .aaguidCritical: "the attestation certificate's AAGUID extension is critical"
            case .aaguidNot16Bytes: "the attestation certificate's AAGUID extension is not 16 bytes"
            case .expired: "the attestation certificate has expired"
            case .notYetValid: "the attestation certificate is not yet valid"
            case .version1: "the attestation certificate is not X.509 version 3"
            }
        }
    }

    /// A packed statement over the packed.ES256 vector's data, by a fresh attestation key
    /// whose certificate the test CA issues with `flaw` (or none).
    struct Maker {
        let registration: Fixtures.Registration
        let ca: TestAttestationCA
        let key = P256.Signing.PrivateKey()

        init() throws {
            registration = try Fixtures.w3cRegistration("packed.ES256")
            ca = try TestAttestationCA()
        }

        var aaguid: [UInt8] { registration.authenticatorData.attestedCredentialData?.aaguid ?? [] }

        func leaf(_ flaw: LeafFlaw?) throws -> Certificate {
            typealias CA = TestAttestationCA
            let subject = try CA.packedSubject(
                country: flaw == .noCountry ? nil : flaw == .countryNotACode ? "Sweden" : "AA",
                organization: flaw == .noOrganization ? nil : "Countersign tests",
                unit: flaw == .wrongUnit ? "Authenticator" : "Authenticator Attestation",
                commonName: flaw == .noCommonName ? nil : "Countersign test authenticator")
            var extensions = [try CA.basicConstraints(isCA: flaw == .certificateAuthority)]
            switch flaw {
            case .aaguidMismatch: extensions.append(try CA.aaguid(Array(repeating: 0x11, count: 16)))
            case .aaguidCritical: extensions.append(try CA.aaguid(aaguid, critical: true))
            case .aaguidNot16Bytes: extensions.append(try CA.aaguid(Array(aaguid.dropLast())))
            case .version1: extensions = []
            default: extensions.append(try CA.aaguid(aaguid))
            }
            let day: TimeInterval = 86_400
            return try ca.issue(
                subject: subject, key: .init(key.publicKey), version: flaw == .version1 ? .v1 : .v3,
                notValidBefore: flaw == .notYetValid ? Fixtures.w3cDate + day : TestAttestationCA.validFrom,
                notValidAfter: flaw == .expired ? Fixtures.w3cDate - day : TestAttestationCA.validUntil,
                extensions: extensions)
        }

        func statement(_ leaf: Certificate) throws -> CBORMap {
            let signed = registration.authenticatorData.bytes + registration.clientDataHash
            return CBORMap([
                .init(key: .text("alg"), value: .init(COSEAlgorithm.es256.rawValue)),
                .init(key: .text("sig"), value: .bytes(Array(try key.signature(for: signed).derRepresentation))),
                .init(key: .text("x5c"), value: .array([.bytes(try TestAttestationCA.encoded(leaf))])),
            ])
        }
    }

    @Test("a statement by a certificate that keeps every rule verifies as basic attestation, and chains to its CA")
    func wellFormedCertificateVerifies() async throws {
        let maker = try Maker()
        let verified = try maker.registration.verify(PackedAttestation(), statement: try maker.statement(try maker.leaf(nil)))
        #expect(verified.kind == .basic)
        #expect(await AttestationTrust(roots: [maker.ca.certificate]).isTrusted(verified, at: Fixtures.w3cDate))
    }

    @Test("an attestation certificate that breaks one rule of §8.2.1 fails with that rule", arguments: LeafFlaw.allCases)
    func certificateRule(flaw: LeafFlaw) throws {
        let maker = try Maker()
        let statement = try maker.statement(try maker.leaf(flaw))
        #expect(throws: AttestationFailure(flaw.reason)) { try maker.registration.verify(PackedAttestation(), statement: statement) }
    }

    static let badMembers: [(name: String, member: String, value: CBORValue?, reason: String)] = [
        ("alg missing", "alg", nil, "alg is missing or not an integer"),
        ("alg as text", "alg", .text("ES256"), "alg is missing or not an integer"),
        ("alg unknown", "alg", .init(-999), "alg -999 is not an algorithm Countersign verifies"),
        ("sig missing", "sig", nil, "sig is missing or not a byte string"),
        ("sig as text", "sig", .text("MEUCIQ"), "sig is missing or not a byte string"),
        ("sig empty", "sig", .bytes([]), "sig is empty"),
        ("x5c empty", "x5c", .array([]), "x5c is not a non-empty array"),
        ("x5c not an array", "x5c", .bytes([0x30]), "x5c is not a non-empty array"),
        ("x5c[0] not a certificate", "x5c", .array([.bytes([0x30, 0x03, 0x02, 0x01, 0x00])]),
         "x5c[0] is not an X.509 certificate Countersign can read"),
        ("x5c[0] not bytes", "x5c", .array([.text("MIIB")]), "x5c[0] is not a non-empty byte string"),
        ("alg other than the attestation key's", "alg", .init(COSEAlgorithm.es384.rawValue),
         "sig does not verify with the attestation certificate key and ES384"),
    ]

    @Test("a packed statement with a missing or ill-typed member fails naming it", arguments: badMembers)
    func badMember(name: String, member: String, value: CBORValue?, reason: String) throws {
        let registration = try Fixtures.w3cRegistration("packed.ES256")
        #expect(throws: AttestationFailure(reason)) {
            try registration.verify(PackedAttestation(), statement: registration.statement.setting(member, to: value))
        }
    }

    @Test("a packed signature with one bit changed does not verify with the attestation certificate")
    func tamperedSignature() throws {
        let registration = try Fixtures.w3cRegistration("packed.ES256")
        let signature = try #require(registration.statement[text: "sig"]?.bytes)
        #expect(throws: AttestationFailure("sig does not verify with the attestation certificate key and ES256")) {
            try registration.verify(PackedAttestation(), statement: registration.statement.setting("sig", to: .bytes(signature.flipping(at: -1))))
        }
    }

    @Test("a packed signature over other client data does not verify")
    func otherClientData() throws {
        let registration = try Fixtures.w3cRegistration("packed.ES256")
        #expect(throws: AttestationFailure("sig does not verify with the attestation certificate key and ES256")) {
            try registration.verify(PackedAttestation(), clientDataHash: registration.clientDataHash.flipping(at: 0))
        }
    }

    @Test("a signature by the credential key, sent with an attestation certificate, does not verify with the certificate's key")
    func credentialKeySignatureWithCertificate() throws {
        let selfAttested = try Fixtures.w3cRegistration("packed-self.ES256")
        let certificate = try #require(try Fixtures.w3cRegistration("packed.ES256").statement[text: "x5c"])
        #expect(throws: AttestationFailure("sig does not verify with the attestation certificate key and ES256")) {
            try selfAttested.verify(PackedAttestation(), statement: selfAttested.statement.setting("x5c", to: certificate))
        }
    }

    @Test("self attestation under an algorithm other than the credential key's fails")
    func selfAttestationAlgorithmMismatch() throws {
        let registration = try Fixtures.w3cRegistration("packed-self.ES256")
        #expect(throws: AttestationFailure("alg RS256 is not the credential key's algorithm ES256")) {
            try registration.verify(PackedAttestation(), statement: registration.statement.setting("alg", to: .init(COSEAlgorithm.rs256.rawValue)))
        }
    }

    @Test("self attestation whose signature was changed does not verify with the credential key")
    func selfAttestationTamperedSignature() throws {
        let registration = try Fixtures.w3cRegistration("packed-self.ES256")
        let signature = try #require(registration.statement[text: "sig"]?.bytes)
        #expect(throws: AttestationFailure("sig does not verify with the credential public key")) {
            try registration.verify(PackedAttestation(), statement: registration.statement.setting("sig", to: .bytes(signature.flipping(at: 10))))
        }
    }

    @Test("a statement over authenticator data without an attested credential fails")
    func noAttestedCredential() throws {
        let registration = try Fixtures.w3cRegistration("packed-self.ES256")
        let data = AuthenticatorData(rpIDHash: registration.authenticatorData.rpIDHash, flags: .userPresent, signCount: 0)
        #expect(throws: AttestationFailure("the authenticator data carries no attested credential")) {
            try registration.verify(PackedAttestation(), authenticatorData: data)
        }
    }

    @Test("a none statement that is not empty fails, such as a packed statement sent as none")
    func noneMustBeEmpty() throws {
        let packed = try Fixtures.w3cRegistration("packed-self.ES256")
        #expect(throws: AttestationFailure("a none attestation statement must be empty")) {
            try packed.verify(NoneAttestation())
        }
        let none = try Fixtures.w3cRegistration("none.ES256")
        #expect(throws: AttestationFailure("a none attestation statement must be empty")) {
            try none.verify(NoneAttestation(), statement: none.statement.setting("x", to: .null))
        }
    }
}
