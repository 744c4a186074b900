import CountersignCBOR
import CountersignWebAuthn
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509
@testable import CountersignServer

/// `tpm` statements with one thing wrong each. Tampered `certInfo` is signed again with the
/// vector's AIK key, so that the rule under test, and not the signature, is what refuses it.
@Suite("WebAuthn attestation: tpm refuses what is wrong")
struct WebAuthnAttestationTPMTests {
    typealias Fixtures = WebAuthnAttestationFixtures

    /// The tpm.ES256 vector's `attestation_private_key`, given in the specification.
    static let vectorAIKKey = "6210f09e0ce7593e851a880a4bdde2d2192afeac46104abce1a890a5a71cf0c6"

    struct Vector {
        let registration: Fixtures.Registration
        let aik: P256.Signing.PrivateKey
        let certInfo: [UInt8]
        let pubArea: [UInt8]

        init() throws {
            registration = try Fixtures.w3cRegistration("tpm.ES256")
            aik = try P256.Signing.PrivateKey(rawRepresentation: try Fixtures.hex(WebAuthnAttestationTPMTests.vectorAIKKey))
            certInfo = try #require(registration.statement[text: "certInfo"]?.bytes)
            pubArea = try #require(registration.statement[text: "pubArea"]?.bytes)
        }

        /// The statement with `certInfo` replaced and signed again by the AIK.
        func signing(_ certInfo: [UInt8], pubArea: [UInt8]? = nil) throws -> CBORMap {
            let signature = Array(try aik.signature(for: certInfo).derRepresentation)
            return registration.statement.setting("certInfo", to: .bytes(certInfo)).setting("sig", to: .bytes(signature))
                .setting("pubArea", to: .bytes(pubArea ?? self.pubArea))
        }

        func verify(_ statement: CBORMap, clientDataHash: [UInt8]? = nil) throws(AttestationFailure) -> VerifiedAttestation {
            try registration.verify(TPMAttestation(), statement: statement, clientDataHash: clientDataHash)
        }
    }

    @Test("the vector signed again unchanged still verifies: the tampering below is what fails")
    func resignedVectorVerifies() throws {
        let vector = try Vector()
        #expect(try vector.verify(try vector.signing(vector.certInfo)).kind == .attestationCA)
    }

    @Test("certInfo whose magic is not TPM_GENERATED_VALUE fails")
    func wrongMagic() throws {
        let vector = try Vector()
        #expect(throws: AttestationFailure("certInfo magic is not TPM_GENERATED_VALUE")) {
            try vector.verify(try vector.signing(vector.certInfo.flipping(at: 3)))
        }
    }

    @Test("certInfo of another type than TPM_ST_ATTEST_CERTIFY (here TPM_ST_ATTEST_QUOTE) fails")
    func wrongType() throws {
        let vector = try Vector()
        var certInfo = vector.certInfo
        certInfo[5] = 0x18
        #expect(throws: AttestationFailure("certInfo type is not TPM_ST_ATTEST_CERTIFY")) { try vector.verify(try vector.signing(certInfo)) }
    }

    @Test("certInfo made for other client data fails on extraData")
    func extraDataMismatch() throws {
        let vector = try Vector()
        #expect(throws: AttestationFailure("certInfo extraData is not the hash of the authenticator data and client data hash")) {
            try vector.verify(vector.registration.statement, clientDataHash: vector.registration.clientDataHash.flipping(at: 0))
        }
        #expect(throws: AttestationFailure("certInfo extraData is not the hash of the authenticator data and client data hash")) {
            try vector.verify(try vector.signing(vector.certInfo.flipping(at: 20)))
        }
    }

    @Test("an alg with no hash a TPM signs with fails on extraData")
    func algorithmWithoutTPMHash() throws {
        let vector = try Vector()
        #expect(throws: AttestationFailure("alg EdDSA is not an algorithm a TPM signs with")) {
            try vector.verify(vector.registration.statement.setting("alg", to: .init(COSEAlgorithm.edDSA.rawValue)))
        }
    }

    @Test("certInfo that names another object than pubArea fails, whether certInfo or pubArea was changed")
    func nameMismatch() throws {
        let vector = try Vector()
        #expect(throws: AttestationFailure("certInfo attested name is not pubArea's name")) {
            try vector.verify(try vector.signing(vector.certInfo.flipping(at: 102)))  // the name's last byte
        }
        #expect(throws: AttestationFailure("certInfo attested name is not pubArea's name")) {
            try vector.verify(try vector.signing(vector.certInfo, pubArea: vector.pubArea.flipping(at: 7)))  // objectAttributes
        }
    }

    @Test("pubArea holding another key than the credential's fails")
    func pubAreaKeyMismatch() throws {
        let vector = try Vector()
        #expect(throws: AttestationFailure("pubArea's key is not the credential public key")) {
            try vector.verify(try vector.signing(vector.certInfo, pubArea: vector.pubArea.flipping(at: -1)))
        }
        let rsa = try Fixtures.deviceRegistration("tpm.dell-xps-13.RS1")
        #expect(throws: AttestationFailure("pubArea's key is not the credential public key")) {
            try vector.verify(vector.registration.statement.setting("pubArea", to: rsa.statement[text: "pubArea"]))
        }
    }

    @Test("a certInfo signature with one bit changed does not verify with the AIK")
    func tamperedSignature() throws {
        let vector = try Vector()
        let signature = try #require(vector.registration.statement[text: "sig"]?.bytes)
        #expect(throws: AttestationFailure("sig does not verify with the AIK certificate key and ES256")) {
            try vector.verify(vector.registration.statement.setting("sig", to: .bytes(signature.flipping(at: -1))))
        }
    }

    static let badMembers: [(member: String, value: CBORValue?, reason: String)] = [
        ("ver", .text("1.2"), "ver \"1.2\" is not \"2.0\""),
        ("ver", nil, "ver is missing or not text"),
        ("ver", .init(2), "ver is missing or not text"),
        ("alg", nil, "alg is missing or not an integer"),
        ("x5c", nil, "x5c is missing"),
        ("sig", nil, "sig is missing or not a byte string"),
        ("certInfo", nil, "certInfo is missing or not a byte string"),
        ("pubArea", .text("pubArea"), "pubArea is missing or not a byte string"),
        ("pubArea", .bytes([0x00, 0x23]), "pubArea is cut short in nameAlg"),
        ("certInfo", .bytes([0xFF, 0x54, 0x43]), "certInfo is cut short in magic"),
    ]

    @Test("a tpm statement with a missing, ill-typed or wrong member fails naming it", arguments: badMembers)
    func badMember(member: String, value: CBORValue?, reason: String) throws {
        let vector = try Vector()
        #expect(throws: AttestationFailure(reason)) { try vector.verify(vector.registration.statement.setting(member, to: value)) }
    }

    /// One broken rule of an AIK certificate (§8.3.1), and the failure it gives.
    enum AIKFlaw: String, CaseIterable, Sendable {
        case subjectNotEmpty, noSubjectAlternativeName, subjectAlternativeNameNotCritical, subjectAlternativeNameWithoutModel,
            noExtendedKeyUsage, otherExtendedKeyUsage, certificateAuthority, aaguidMismatch, expired, version1

        var reason: String {
            switch self {
            case .subjectNotEmpty: "the AIK certificate's subject is not empty"
            case .noSubjectAlternativeName: "the AIK certificate has no subject alternative name"
            case .subjectAlternativeNameNotCritical: "the AIK certificate's subject alternative name is not critical"
            case .subjectAlternativeNameWithoutModel:
                "the AIK certificate's subject alternative name does not name the TPM manufacturer, model and version"
            case .noExtendedKeyUsage, .otherExtendedKeyUsage:
                "the AIK certificate's extended key usage lacks tcg-kp-AIKCertificate (2.23.133.8.3)"
            case .certificateAuthority: "the AIK certificate is a CA certificate"
            case .aaguidMismatch: "the AIK certificate's AAGUID extension does not match the authenticator data's AAGUID"
            case .expired: "the AIK certificate has expired"
            case .version1: "the AIK certificate is not X.509 version 3"
            }
        }
    }

    /// The vector's statement, signed by a fresh AIK whose certificate the test CA issued with `flaw`.
    static func statement(withAIKCertificate flaw: AIKFlaw?, ca: TestAttestationCA) throws -> CBORMap {
        typealias CA = TestAttestationCA
        let vector = try Vector()
        let aik = P256.Signing.PrivateKey()
        var extensions = [try CA.basicConstraints(isCA: flaw == .certificateAuthority)]
        switch flaw {
        case .noSubjectAlternativeName: break
        case .subjectAlternativeNameNotCritical: extensions.append(try CA.tpmSubjectAlternativeName(critical: false))
        case .subjectAlternativeNameWithoutModel:
            extensions.append(try CA.tpmSubjectAlternativeName(attributes: [[2, 23, 133, 2, 1], [2, 23, 133, 2, 3]]))
        default: extensions.append(try CA.tpmSubjectAlternativeName())
        }
        switch flaw {
        case .noExtendedKeyUsage: break
        case .otherExtendedKeyUsage: extensions.append(try CA.extendedKeyUsage([1, 3, 6, 1, 5, 5, 7, 3, 2]))
        default: extensions.append(try CA.extendedKeyUsage())
        }
        if flaw == .aaguidMismatch { extensions.append(try CA.aaguid(Array(repeating: 0x22, count: 16))) }
        let certificate = try ca.issue(
            subject: flaw == .subjectNotEmpty ? try CA.packedSubject() : DistinguishedName(), key: .init(aik.publicKey),
            version: flaw == .version1 ? .v1 : .v3,
            notValidAfter: flaw == .expired ? Fixtures.w3cDate - 86_400 : CA.validUntil,
            extensions: flaw == .version1 ? [] : extensions)
        let signature = Array(try aik.signature(for: vector.certInfo).derRepresentation)
        return vector.registration.statement.setting("sig", to: .bytes(signature))
            .setting("x5c", to: .array([.bytes(try CA.encoded(certificate)), .bytes(try CA.encoded(ca.certificate))]))
    }

    @Test("an AIK certificate that keeps every rule verifies, and its path is trusted to its CA")
    func wellFormedAIKCertificate() async throws {
        let ca = try TestAttestationCA()
        let vector = try Vector()
        let verified = try vector.verify(try Self.statement(withAIKCertificate: nil, ca: ca))
        #expect(verified.kind == .attestationCA)
        #expect(await AttestationTrust(roots: [ca.certificate]).isTrusted(verified, at: Fixtures.w3cDate))
    }

    @Test("an AIK certificate that breaks one rule of §8.3.1 fails with that rule", arguments: AIKFlaw.allCases)
    func aikCertificateRule(flaw: AIKFlaw) throws {
        let vector = try Vector()
        let statement = try Self.statement(withAIKCertificate: flaw, ca: try TestAttestationCA())
        #expect(throws: AttestationFailure(flaw.reason)) { try vector.verify(statement) }
    }

    @Test("a path whose AIK certificate lacks the TPM's names in its SAN is not trusted, even from a trusted CA")
    func trustNeedsTheTPMNames() async throws {
        let ca = try TestAttestationCA()
        let statement = try Self.statement(withAIKCertificate: .subjectAlternativeNameWithoutModel, ca: ca)
        let chain = statement.certificates
        let attestation = VerifiedAttestation(format: "tpm", kind: .attestationCA, certificateChain: chain)
        #expect(await AttestationTrust(roots: [ca.certificate]).isTrusted(attestation, at: Fixtures.w3cDate) == false)
    }
}
