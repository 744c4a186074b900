import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Whether a verified attestation's certificate path ends at a root the tenant trusts
/// (WebAuthn Level 3 §7.1 steps 25–26). The path is built and checked by swift-certificates'
/// `Verifier` under RFC 5280 at the ceremony's time, from `x5c[0]` through `x5c[1...]`.
///
/// ```swift
/// let trust = AttestationTrust(roots: relyingParty.attestationRoots)
/// let trusted = await trust.isTrusted(attestation, at: .now)
/// ```
///
/// `none` and self attestation have no path and are never trusted: whether to accept them is
/// the relying party's policy (`allowUnattested`), not a matter of certificates. The `apple`
/// format also trusts Apple's WebAuthn Root CA, which is the only issuer of that format.
struct AttestationTrust: Sendable {
    let roots: [Certificate]

    init(roots: [Certificate]) {
        self.roots = roots
    }

    func isTrusted(_ attestation: VerifiedAttestation, at date: Date) async -> Bool {
        switch attestation.kind {
        case .none, .self: return false
        case .basic, .attestationCA, .anonymizationCA: break
        }
        // A certificate that does not parse cannot be part of a path anyone can check.
        guard let leafDER = attestation.certificateChain.first, let leaf = try? Certificate(derEncoded: leafDER),
            let intermediates = try? attestation.certificateChain.dropFirst().map({ try Certificate(derEncoded: $0) })
        else { return false }
        var anchors = roots
        if attestation.format == AppleAttestation().identifier { anchors.append(AppleWebAuthnRoot.certificate) }
        guard !anchors.isEmpty else { return false }
        let tpm = attestation.format == TPMAttestation().identifier
        var verifier = Verifier(rootCertificates: CertificateStore(anchors)) {
            RFC5280Policy(fixedExpiryValidationTime: date)
            TPMAttestationIdentityPolicy(applies: tpm)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates))
        if case .validCertificate = result { return true }
        return false
    }
}

/// The critical extensions of TPM AIK certificates that `RFC5280Policy` does not handle, so
/// that a TPM path is judged on its merits rather than refused unread (`Verifier` refuses any
/// certificate with a critical extension no policy claims).
///
/// - The subject alternative name: critical in every AIK certificate because the subject is
///   empty. This policy enforces what it must hold — the TPM's manufacturer, model and version
///   in a directory name — on the AIK certificate, and claims it nowhere else.
/// - Certificate policies: critical in Microsoft's AIK certificates. Countersign asks for no
///   particular policy (RFC 5280 §6.1.1: the initial policy set is any-policy and no explicit
///   policy is required), under which this extension alone can never fail a path; policy
///   constraints and inhibit-any-policy, which could, stay unclaimed and so refused if critical.
struct TPMAttestationIdentityPolicy: VerifierPolicy {
    static let certificatePolicies: ASN1ObjectIdentifier = [2, 5, 29, 32]

    /// Off for every format but `tpm`: no other attestation certificate is claimed to need it.
    let applies: Bool

    var verifyingCriticalExtensions: [ASN1ObjectIdentifier] {
        applies ? [.X509ExtensionID.subjectAlternativeName, Self.certificatePolicies] : []
    }

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        guard applies else { return .meetsPolicy }
        do {
            try TPMAttestation.subjectAlternativeName(of: chain.leaf)
        } catch {
            return .failsToMeetPolicy(reason: error.reason)
        }
        for certificate in chain.dropFirst() where certificate.extensions[oid: .X509ExtensionID.subjectAlternativeName]?.critical == true {
            return .failsToMeetPolicy(reason: "a CA certificate above the AIK certificate has a critical subject alternative name")
        }
        return .meetsPolicy
    }
}
