import CountersignCBOR
import CountersignWebAuthn
import Foundation
import SwiftASN1
import X509

/// `packed` (WebAuthn Level 3 §8.2): a signature over `authenticatorData ‖ clientDataHash`,
/// by an attestation key whose certificate comes in `x5c` (basic attestation; Countersign does
/// not tell attestation-CA apart, the trust decision is the same), or by the credential key
/// itself when `x5c` is absent (self attestation).
struct PackedAttestation: AttestationStatementFormat {
    let identifier = "packed"
    static let role = "attestation"

    func verify(
        statement: CBORMap, authenticatorData: AuthenticatorData, clientDataHash: [UInt8], at date: Date
    ) throws(AttestationFailure) -> VerifiedAttestation {
        let credential = try AttestationStatementMembers.attestedCredential(authenticatorData)
        let algorithm = try AttestationStatementMembers.algorithm(in: statement)
        let signature = try AttestationStatementMembers.signature(in: statement)
        let signedData = authenticatorData.bytes + clientDataHash
        guard statement[text: "x5c"] != nil else {
            try Self.algorithm(algorithm, isOf: credential.publicKey)
            try Self.signature(signature, over: signedData, by: credential.publicKey)
            return VerifiedAttestation(format: identifier, kind: .self, certificateChain: [])
        }
        let certificates = try AttestationCertificates(in: statement)
        try AttestationStatementMembers.signature(
            signature, over: signedData, verifiedBy: certificates.leafKey, algorithm: algorithm, signer: "attestation certificate")
        let leaf = certificates.leaf
        try AttestationCertificateRules.isVersion3(leaf, role: Self.role)
        try Self.subject(of: leaf)
        try AttestationCertificateRules.isNotCA(leaf, role: Self.role)
        try AttestationCertificateRules.aaguidExtension(of: leaf, matches: credential.aaguid, role: Self.role)
        try AttestationCertificateRules.isValid(leaf, at: date, role: Self.role)
        return VerifiedAttestation(format: identifier, kind: .basic, certificateChain: certificates.chain)
    }

    /// Self attestation: the statement's `alg` is the credential key's own, so the key cannot be
    /// made to vouch for itself under an algorithm it was not created for.
    static func algorithm(_ algorithm: COSEAlgorithm, isOf key: COSEKey) throws(AttestationFailure) {
        guard algorithm == key.algorithm else {
            throw AttestationFailure("alg \(algorithm.name) is not the credential key's algorithm \(key.algorithm.name)")
        }
    }

    /// Self attestation: `sig` verifies with the credential key.
    static func signature(_ signature: [UInt8], over data: [UInt8], by key: COSEKey) throws(AttestationFailure) {
        guard key.isValidSignature(signature, for: data) else {
            throw AttestationFailure("sig does not verify with the credential public key")
        }
    }

    /// §8.2.1: the subject names the vendor (C, an ISO 3166 alpha-2 code; O), says what the
    /// certificate is for (OU "Authenticator Attestation") and names it (CN).
    static func subject(of leaf: Certificate) throws(AttestationFailure) {
        typealias Attribute = ASN1ObjectIdentifier.RDNAttributeType
        let country = AttestationCertificateRules.subjectValues(of: leaf, type: Attribute.countryName)
        guard country.count == 1, let code = country.first, Self.isCountryCode(code) else {
            throw AttestationFailure("the attestation certificate's subject C is not one ISO 3166 country code")
        }
        guard AttestationCertificateRules.subjectValues(of: leaf, type: Attribute.organizationName).contains(where: { !$0.isEmpty }) else {
            throw AttestationFailure("the attestation certificate's subject has no O")
        }
        guard AttestationCertificateRules.subjectValues(of: leaf, type: Attribute.organizationalUnitName) == ["Authenticator Attestation"]
        else {
            throw AttestationFailure("the attestation certificate's subject OU is not \"Authenticator Attestation\"")
        }
        guard AttestationCertificateRules.subjectValues(of: leaf, type: Attribute.commonName).contains(where: { !$0.isEmpty }) else {
            throw AttestationFailure("the attestation certificate's subject has no CN")
        }
    }

    /// Two upper-case ASCII letters: the shape of every ISO 3166-1 alpha-2 code, user-assigned
    /// ones (`AA`, which the W3C test vectors use) included.
    static func isCountryCode(_ code: String) -> Bool {
        code.utf8.count == 2 && code.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }
}
