import CountersignCBOR
import CountersignWebAuthn
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509
@testable import CountersignServer

/// `fido-u2f` and `apple` statements with one thing wrong each.
@Suite("WebAuthn attestation: fido-u2f and apple refuse what is wrong")
struct WebAuthnAttestationU2FAppleTests {
    typealias Fixtures = WebAuthnAttestationFixtures

    static func u2fRegistration() throws -> Fixtures.Registration {
        try Fixtures.w3cRegistration("fido-u2f.ES256")
    }

    @Test("a fido-u2f x5c with two certificates fails, even when the second is the issuer")
    func u2fTwoCertificates() throws {
        let registration = try Self.u2fRegistration()
        let leaf = try #require(registration.statement[text: "x5c"]?.array?.first)
        let ca = try Fixtures.hex(try Fixtures.w3c().attestation_ca_cert)
        #expect(throws: AttestationFailure("a fido-u2f x5c must hold exactly one certificate, not 2")) {
            try registration.verify(FIDOU2FAttestation(), statement: registration.statement.setting("x5c", to: .array([leaf, .bytes(ca)])))
        }
    }

    @Test("a fido-u2f signature with one bit changed does not verify")
    func u2fTamperedSignature() throws {
        let registration = try Self.u2fRegistration()
        let signature = try #require(registration.statement[text: "sig"]?.bytes)
        #expect(throws: AttestationFailure("sig does not verify with the attestation certificate key and ES256")) {
            try registration.verify(FIDOU2FAttestation(), statement: registration.statement.setting("sig", to: .bytes(signature.flipping(at: -2))))
        }
    }

    @Test("a fido-u2f signature checked against another credential ID does not verify: the ID is part of the signed data")
    func u2fOtherCredentialID() throws {
        let registration = try Self.u2fRegistration()
        var bytes = registration.authenticatorData.bytes
        bytes[55] ^= 0x01  // the first byte of the credential ID
        #expect(throws: AttestationFailure("sig does not verify with the attestation certificate key and ES256")) {
            try registration.verify(FIDOU2FAttestation(), authenticatorData: try AuthenticatorData(parsing: bytes))
        }
    }

    @Test("a fido-u2f attestation certificate with a key other than P-256 fails")
    func u2fCertificateNotP256() throws {
        let registration = try Self.u2fRegistration()
        let ca = try TestAttestationCA()
        let leaf = try ca.issue(
            subject: try TestAttestationCA.packedSubject(), key: .init(P384.Signing.PrivateKey().publicKey),
            extensions: [try TestAttestationCA.basicConstraints(isCA: false)])
        #expect(throws: AttestationFailure("the fido-u2f attestation certificate's key is not a P-256 key")) {
            try registration.verify(
                FIDOU2FAttestation(), statement: registration.statement.setting("x5c", to: .array([.bytes(try TestAttestationCA.encoded(leaf))])))
        }
    }

    @Test("a fido-u2f statement for a credential key other than ES256 fails")
    func u2fCredentialNotES256() throws {
        let registration = try Self.u2fRegistration()
        let es384 = try Fixtures.w3cRegistration("packed.ES384").authenticatorData.replacingAAGUID(with: Array(repeating: 0, count: 16))
        #expect(throws: AttestationFailure("a fido-u2f credential key must be an ES256 P-256 key")) {
            try registration.verify(FIDOU2FAttestation(), authenticatorData: es384)
        }
    }

    @Test("a fido-u2f statement without sig or x5c fails naming it",
          arguments: [("sig", "sig is missing or not a byte string"), ("x5c", "x5c is missing")])
    func u2fMissingMember(member: String, reason: String) throws {
        let registration = try Self.u2fRegistration()
        #expect(throws: AttestationFailure(reason)) {
            try registration.verify(FIDOU2FAttestation(), statement: registration.statement.setting(member, to: nil))
        }
    }

    /// An apple statement whose credCert the test CA issued, for `key`, with `nonceExtension`.
    static func appleStatement(key: P256.Signing.PublicKey, nonceExtension: Certificate.Extension?) throws -> CBORMap {
        var extensions = [try TestAttestationCA.basicConstraints(isCA: false)]
        if let nonceExtension { extensions.append(nonceExtension) }
        let credCert = try TestAttestationCA().issue(
            subject: try TestAttestationCA.packedSubject(), key: .init(key), extensions: extensions)
        return CBORMap([.init(key: .text("x5c"), value: .array([.bytes(try TestAttestationCA.encoded(credCert))]))])
    }

    static func appleRegistration() throws -> (registration: Fixtures.Registration, key: P256.Signing.PublicKey, nonce: [UInt8]) {
        let registration = try Fixtures.w3cRegistration("apple.ES256")
        guard case .ec2(_, let x, let y) = registration.authenticatorData.attestedCredentialData?.publicKey.material else {
            throw Fixtures.FixtureError(description: "the apple vector's key is not EC2")
        }
        let key = try P256.Signing.PublicKey(x963Representation: [0x04] + x + y)
        let nonce = Array(SHA256.hash(data: registration.authenticatorData.bytes + registration.clientDataHash))
        return (registration, key, nonce)
    }

    @Test("an apple credCert for the credential key with this ceremony's nonce verifies as anonymization CA")
    func appleWellFormedCertificate() throws {
        let (registration, key, nonce) = try Self.appleRegistration()
        let statement = try Self.appleStatement(key: key, nonceExtension: try TestAttestationCA.appleNonce(nonce))
        #expect(try registration.verify(AppleAttestation(), statement: statement).kind == .anonymizationCA)
    }

    @Test("an apple statement for other client data fails on the nonce")
    func appleNonceMismatch() throws {
        let registration = try Fixtures.w3cRegistration("apple.ES256")
        #expect(throws: AttestationFailure("credCert's nonce is not SHA-256 of the authenticator data and client data hash")) {
            try registration.verify(AppleAttestation(), clientDataHash: registration.clientDataHash.flipping(at: 31))
        }
    }

    @Test("an apple credCert for another key, though with the right nonce, fails")
    func appleKeyMismatch() throws {
        let (registration, _, nonce) = try Self.appleRegistration()
        let statement = try Self.appleStatement(
            key: P256.Signing.PrivateKey().publicKey, nonceExtension: try TestAttestationCA.appleNonce(nonce))
        #expect(throws: AttestationFailure("the credential public key is not credCert's subject public key")) {
            try registration.verify(AppleAttestation(), statement: statement)
        }
    }

    @Test("an apple credCert without the nonce extension, or with one of another shape, fails")
    func appleNonceExtensionShape() throws {
        let (registration, key, nonce) = try Self.appleRegistration()
        #expect(throws: AttestationFailure("credCert has no nonce extension (1.2.840.113635.100.8.2)")) {
            try registration.verify(AppleAttestation(), statement: try Self.appleStatement(key: key, nonceExtension: nil))
        }
        let bare = Certificate.Extension(
            oid: AppleAttestation.nonceExtension, critical: false, value: try TestAttestationCA.der(ASN1OctetString(contentBytes: nonce[...])))
        #expect(throws: AttestationFailure("credCert's nonce extension is not a SEQUENCE holding [1] OCTET STRING")) {
            try registration.verify(AppleAttestation(), statement: try Self.appleStatement(key: key, nonceExtension: bare))
        }
    }

    @Test("an apple statement without x5c fails")
    func appleWithoutCertificate() throws {
        let registration = try Fixtures.w3cRegistration("apple.ES256")
        #expect(throws: AttestationFailure("x5c is missing")) {
            try registration.verify(AppleAttestation(), statement: CBORMap())
        }
    }
}
