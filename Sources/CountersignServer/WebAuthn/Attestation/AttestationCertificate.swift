import CountersignCBOR
import CountersignWebAuthn
import Foundation
import SwiftASN1
import X509

/// The `x5c` member of an attestation statement (WebAuthn Level 3 §8.2, §8.3, §8.6, §8.8): the
/// attestation certificate first, then the certificates that lead toward a root, each DER.
/// Only the leaf is read here; the rest of the path is `AttestationTrust`'s to judge.
struct AttestationCertificates {
    /// The attestation certificate (`attestnCert`, `aikCert`, `credCert`).
    let leaf: Certificate
    /// The leaf's public key, to verify the statement's signature or compare with the credential's.
    let leafKey: SignatureVerifier
    /// `x5c` as received, leaf first.
    let chain: [[UInt8]]

    init(in statement: CBORMap) throws(AttestationFailure) {
        guard let member = statement[text: "x5c"] else { throw AttestationFailure("x5c is missing") }
        guard let items = member.array, !items.isEmpty else { throw AttestationFailure("x5c is not a non-empty array") }
        var chain: [[UInt8]] = []
        for (index, item) in items.enumerated() {
            guard let der = item.bytes, !der.isEmpty else {
                throw AttestationFailure("x5c[\(index)] is not a non-empty byte string")
            }
            chain.append(der)
        }
        // swift-certificates reads RSA keys of 2048 bits and more only; a leaf with a smaller
        // key fails here, as does anything that is not an X.509 certificate.
        guard let leaf = try? Certificate(derEncoded: chain[0]) else {
            throw AttestationFailure("x5c[0] is not an X.509 certificate Countersign can read")
        }
        // `subjectPublicKeyInfoBytes` is only the key's BIT STRING; the verifier reads the whole
        // SubjectPublicKeyInfo, algorithm included.
        var spki = DER.Serializer()
        guard (try? spki.serialize(leaf.publicKey)) != nil, let key = SignatureVerifier(subjectPublicKeyInfo: spki.serializedBytes) else {
            throw AttestationFailure("the key of x5c[0] is of a kind Countersign does not verify")
        }
        self.leaf = leaf
        self.chain = chain
        leafKey = key
    }
}

/// The requirements §8.2.1 (packed) and §8.3.1 (TPM) place on an attestation certificate
/// alike, one check per requirement. `role` names the certificate in the failure.
enum AttestationCertificateRules {
    /// `id-fido-gen-ce-aaguid`: the AAGUID of the authenticator model the certificate is for.
    static let aaguidExtension: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]

    /// "Version MUST be set to 3": extensions, which carry the rules below, exist from v3.
    static func isVersion3(_ certificate: Certificate, role: String) throws(AttestationFailure) {
        guard certificate.version == .v3 else { throw AttestationFailure("the \(role) certificate is not X.509 version 3") }
    }

    /// "The Basic Constraints extension MUST have the CA component set to false": an attestation
    /// key must not be able to issue certificates. Without the extension a certificate is no CA
    /// either (RFC 5280 §4.2.1.9), so its absence passes.
    static func isNotCA(_ certificate: Certificate, role: String) throws(AttestationFailure) {
        let constraints: BasicConstraints?
        do {
            constraints = try certificate.extensions.basicConstraints
        } catch {
            throw AttestationFailure("the \(role) certificate's basic constraints are malformed")
        }
        if case .isCertificateAuthority = constraints {
            throw AttestationFailure("the \(role) certificate is a CA certificate")
        }
    }

    /// The certificate was valid when the ceremony ran; an expired attestation certificate
    /// attests nothing about a key created after it.
    static func isValid(_ certificate: Certificate, at date: Date, role: String) throws(AttestationFailure) {
        guard certificate.notValidBefore <= date else { throw AttestationFailure("the \(role) certificate is not yet valid") }
        guard date <= certificate.notValidAfter else { throw AttestationFailure("the \(role) certificate has expired") }
    }

    /// If present, `id-fido-gen-ce-aaguid` is not critical and names the AAGUID of the
    /// attested credential: an OCTET STRING (the extension value) holding a 16-byte OCTET STRING.
    static func aaguidExtension(of certificate: Certificate, matches aaguid: [UInt8], role: String) throws(AttestationFailure) {
        guard let fidoExtension = certificate.extensions[oid: aaguidExtension] else { return }
        guard !fidoExtension.critical else { throw AttestationFailure("the \(role) certificate's AAGUID extension is critical") }
        let value: ASN1OctetString
        do {
            value = try ASN1OctetString(derEncoded: fidoExtension.value)
        } catch {
            throw AttestationFailure("the \(role) certificate's AAGUID extension is not an OCTET STRING")
        }
        guard value.bytes.count == 16 else { throw AttestationFailure("the \(role) certificate's AAGUID extension is not 16 bytes") }
        guard Array(value.bytes) == aaguid else {
            throw AttestationFailure("the \(role) certificate's AAGUID extension does not match the authenticator data's AAGUID")
        }
    }

    /// The values of the subject's attributes of `type`, as text.
    static func subjectValues(of certificate: Certificate, type: ASN1ObjectIdentifier) -> [String] {
        certificate.subject.flatMap { $0 }.filter { $0.type == type }.map { String($0.value) ?? "" }
    }
}
