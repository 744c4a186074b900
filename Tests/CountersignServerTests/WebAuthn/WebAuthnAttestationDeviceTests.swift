import CountersignCBOR
import CountersignWebAuthn
import Foundation
import SwiftASN1
import Testing
@_spi(FixedExpiryValidationTime) import X509
@testable import CountersignServer

/// Attestation statements real authenticators produced (taken from py_webauthn's tests):
/// Windows Hello TPMs from three manufacturers, RSA and ECC, signing with RS1; YubiKeys in
/// packed and U2F form; the FIDO conformance tool's U2F key; an Apple passkey. Real inputs are
/// where TPM structures and certificate extensions differ from generated ones.
@Suite("WebAuthn attestation: real authenticators")
struct WebAuthnAttestationDeviceTests {
    typealias Fixtures = WebAuthnAttestationFixtures

    static let registrations: [(name: String, kind: VerifiedAttestation.Kind)] = [
        ("tpm.surface-pro-4.RS1", .attestationCA),
        ("tpm.dell-xps-13.RS1", .attestationCA),
        ("tpm.lenovo-carbon-x1.RS1", .attestationCA),
        ("tpm.ecc-pubarea.RS1", .attestationCA),
        ("packed.yubikey-firefox.ES256", .basic),
        ("packed.yubikey-okp.ES256", .basic),
        ("fido-u2f.yubikey-firefox", .basic),
        ("fido-u2f.fido-conformance", .basic),
        ("apple.passkey", .anonymizationCA),
    ]

    static let tpmRegistrations = registrations.map(\.name).filter { $0.hasPrefix("tpm.") }

    @Test("a real authenticator's statement verifies with its format's attestation type", arguments: registrations)
    func registrationVerifies(name: String, kind: VerifiedAttestation.Kind) throws {
        let registration = try Fixtures.deviceRegistration(name)
        #expect(registration.object.format == (try Fixtures.device(name)).format)
        let format = try #require(AttestationFormats.all[registration.object.format])
        let verified = try registration.verify(format)
        #expect(verified.kind == kind)
        #expect(registration.authenticatorData.attestedCredentialData?.credentialID == (try Fixtures.hex(try Fixtures.device(name).credential_id)))
    }

    @Test("the Windows Hello statements are RS1, and their pubArea is parsed as the TPM wrote it", arguments: tpmRegistrations)
    func windowsHelloStatements(name: String) throws {
        let registration = try Fixtures.deviceRegistration(name)
        #expect(registration.statement[text: "alg"]?.int == COSEAlgorithm.rs1.rawValue)
        let pubArea = try TPMPublic(parsing: try #require(registration.statement[text: "pubArea"]?.bytes))
        switch (pubArea.key, try #require(registration.authenticatorData.attestedCredentialData).publicKey.material) {
        case (.rsa(let modulus, let exponent), .rsa(let n, _)):
            #expect(modulus == n)
            #expect(exponent == 65537)
        case (.ecc(let curve, _, _), .ec2(let crv, _, _)):
            #expect(curve == 0x0003)
            #expect(crv == 1)
        default:
            Issue.record("pubArea and the credential key are of different types")
        }
    }

    @Test("an AIK certificate past its validity fails the TPM statement", arguments: tpmRegistrations)
    func expiredAIKCertificateFails(name: String) throws {
        let registration = try Fixtures.deviceRegistration(name)
        #expect(throws: AttestationFailure("the AIK certificate has expired")) {
            try registration.verify(TPMAttestation(), at: Date(timeIntervalSince1970: 1_893_456_000))  // 2030
        }
    }

    @Test("a Windows Hello AIK path is trusted up to the CA the tenant trusts, and not without it", arguments: tpmRegistrations)
    func windowsHelloPathIsTrustedToItsCA(name: String) async throws {
        let registration = try Fixtures.deviceRegistration(name)
        let attestation = try registration.verify(TPMAttestation())
        let issuingCA = try Certificate(derEncoded: try #require(attestation.certificateChain.last))
        #expect(await AttestationTrust(roots: [issuingCA]).isTrusted(attestation, at: registration.date))
        #expect(await AttestationTrust(roots: []).isTrusted(attestation, at: registration.date) == false)
    }

    @Test("RFC 5280 alone refuses AIK certificates for their critical subject alternative name and policies: the TPM policy is what lets them be judged")
    func aikCertificatesNeedTheTPMPolicy() async throws {
        let registration = try Fixtures.deviceRegistration("tpm.dell-xps-13.RS1")
        let chain = try registration.statement.certificates.map { try Certificate(derEncoded: $0) }
        var verifier = Verifier(rootCertificates: CertificateStore([chain[1]])) {
            RFC5280Policy(fixedExpiryValidationTime: registration.date)
        }
        let result = await verifier.validate(leaf: chain[0], intermediates: CertificateStore([]))
        guard case .couldNotValidate = result else {
            Issue.record("RFC5280Policy accepted an AIK certificate with unhandled critical extensions")
            return
        }
        let critical = chain[0].extensions.filter(\.critical).map(\.oid)
        #expect(critical.contains(.X509ExtensionID.subjectAlternativeName))
        #expect(critical.contains([2, 5, 29, 32]))
    }

    @Test("the Apple passkey chains to Apple's WebAuthn root with no tenant roots, while its credCert is valid")
    func applePasskeyChainsToApple() async throws {
        let registration = try Fixtures.deviceRegistration("apple.passkey")
        let attestation = try registration.verify(AppleAttestation())
        #expect(await AttestationTrust(roots: []).isTrusted(attestation, at: registration.date))
        let afterExpiry = Date(timeIntervalSince1970: 1_640_995_200)  // 2022-01-01; credCerts live three days
        #expect(await AttestationTrust(roots: []).isTrusted(attestation, at: afterExpiry) == false)
    }

    @Test("Apple's root vouches only for apple statements, not for another format carrying the same path")
    func appleRootIsForAppleOnly() async throws {
        let registration = try Fixtures.deviceRegistration("apple.passkey")
        var attestation = try registration.verify(AppleAttestation())
        attestation.format = "packed"
        attestation.kind = .basic
        #expect(await AttestationTrust(roots: []).isTrusted(attestation, at: registration.date) == false)
    }

    @Test("the YubiKey packed certificate carries the AAGUID extension, naming the authenticator data's AAGUID")
    func yubiKeyAAGUIDExtension() throws {
        let registration = try Fixtures.deviceRegistration("packed.yubikey-firefox.ES256")
        let leaf = try Certificate(derEncoded: try #require(registration.statement[text: "x5c"]?.array?.first?.bytes))
        let fidoExtension = try #require(leaf.extensions[oid: AttestationCertificateRules.aaguidExtension])
        let aaguid = try ASN1OctetString(derEncoded: fidoExtension.value)
        #expect(Array(aaguid.bytes) == registration.authenticatorData.attestedCredentialData?.aaguid)
    }
}
