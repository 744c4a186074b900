import CountersignCBOR
import CountersignWebAuthn
import Crypto
import Foundation
import SwiftASN1
import X509

/// `apple` (Apple Anonymous Attestation, WebAuthn Level 3 §8.8): Apple issues a certificate
/// for each credential (`credCert`) whose subject key is the credential key and whose
/// extension 1.2.840.113635.100.8.2 carries `SHA-256(authenticatorData ‖ clientDataHash)`.
/// There is no separate signature: the CA's signature over that certificate is the attestation.
struct AppleAttestation: AttestationStatementFormat {
    let identifier = "apple"
    static let nonceExtension: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 8, 2]

    func verify(
        statement: CBORMap, authenticatorData: AuthenticatorData, clientDataHash: [UInt8], at date: Date
    ) throws(AttestationFailure) -> VerifiedAttestation {
        let credential = try AttestationStatementMembers.attestedCredential(authenticatorData)
        let certificates = try AttestationCertificates(in: statement)
        let nonce = Array(SHA256.hash(data: authenticatorData.bytes + clientDataHash))
        try Self.nonce(nonce, isCertifiedBy: certificates.leaf)
        try Self.credentialKey(credential.publicKey, isSubjectKey: certificates.leafKey)
        return VerifiedAttestation(format: identifier, kind: .anonymizationCA, certificateChain: certificates.chain)
    }

    /// The nonce extension is `SEQUENCE { [1] EXPLICIT OCTET STRING }` and holds this ceremony's
    /// nonce, which binds the certificate to this authenticator data and client data.
    static func nonce(_ nonce: [UInt8], isCertifiedBy credCert: Certificate) throws(AttestationFailure) {
        guard let appleExtension = credCert.extensions[oid: nonceExtension] else {
            throw AttestationFailure("credCert has no nonce extension (1.2.840.113635.100.8.2)")
        }
        let certified: ArraySlice<UInt8>
        do {
            certified = try DER.sequence(DER.parse(appleExtension.value), identifier: .sequence) { nodes in
                try DER.explicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { try ASN1OctetString(derEncoded: $0) }
            }.bytes
        } catch {
            throw AttestationFailure("credCert's nonce extension is not a SEQUENCE holding [1] OCTET STRING")
        }
        guard Array(certified) == nonce else {
            throw AttestationFailure("credCert's nonce is not SHA-256 of the authenticator data and client data hash")
        }
    }

    /// The certificate is for this credential: its subject key is the credential key.
    static func credentialKey(_ key: COSEKey, isSubjectKey certificateKey: SignatureVerifier) throws(AttestationFailure) {
        guard let credentialKey = try? key.verifier(), credentialKey.sameKey(as: certificateKey) else {
            throw AttestationFailure("the credential public key is not credCert's subject public key")
        }
    }
}
