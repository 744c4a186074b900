import CountersignCBOR
import CountersignWebAuthn
import Foundation

/// `fido-u2f` (WebAuthn Level 3 §8.6): a U2F authenticator's registration signature, which
/// the client turned into WebAuthn's form. The signature covers the U2F registration data,
/// not the authenticator data: `0x00 ‖ rpIdHash ‖ clientDataHash ‖ credentialId ‖ 0x04 ‖ x ‖ y`.
/// The AAGUID is not checked: §8.6 sets no rule for it (a client fills in zeros for a U2F
/// device, and the specification's own test vector carries a non-zero one).
struct FIDOU2FAttestation: AttestationStatementFormat {
    let identifier = "fido-u2f"

    func verify(
        statement: CBORMap, authenticatorData: AuthenticatorData, clientDataHash: [UInt8], at date: Date
    ) throws(AttestationFailure) -> VerifiedAttestation {
        let credential = try AttestationStatementMembers.attestedCredential(authenticatorData)
        let signature = try AttestationStatementMembers.signature(in: statement)
        let certificates = try AttestationCertificates(in: statement)
        try Self.singleCertificate(certificates)
        try Self.p256Key(certificates.leafKey)
        let publicKeyU2F = try Self.publicKeyU2F(credential.publicKey)
        let verificationData = [0x00] + authenticatorData.rpIDHash + clientDataHash + credential.credentialID + publicKeyU2F
        try AttestationStatementMembers.signature(
            signature, over: verificationData, verifiedBy: certificates.leafKey, algorithm: .es256,
            signer: "attestation certificate")
        return VerifiedAttestation(format: identifier, kind: .basic, certificateChain: certificates.chain)
    }

    /// U2F has one attestation certificate and no chain: `x5c` holds exactly it.
    static func singleCertificate(_ certificates: AttestationCertificates) throws(AttestationFailure) {
        guard certificates.chain.count == 1 else {
            throw AttestationFailure("a fido-u2f x5c must hold exactly one certificate, not \(certificates.chain.count)")
        }
    }

    /// U2F attestation keys are P-256 ECDSA keys.
    static func p256Key(_ key: SignatureVerifier) throws(AttestationFailure) {
        guard case .p256 = key else { throw AttestationFailure("the fido-u2f attestation certificate's key is not a P-256 key") }
    }

    /// The credential key as U2F's raw uncompressed point: only a P-256 ES256 key has one.
    static func publicKeyU2F(_ key: COSEKey) throws(AttestationFailure) -> [UInt8] {
        guard key.algorithm == .es256, case .ec2(_, let x, let y) = key.material, x.count == 32, y.count == 32 else {
            throw AttestationFailure("a fido-u2f credential key must be an ES256 P-256 key")
        }
        return [0x04] + x + y
    }
}
