import CountersignCBOR
import CountersignWebAuthn
import Foundation
import SwiftASN1
import X509

/// `tpm` (WebAuthn Level 3 §8.3): the TPM certified the credential key (`TPM2_Certify`) with
/// an attestation identity key (AIK), whose certificate a privacy CA issued. The statement
/// carries the key as the TPM holds it (`pubArea`), what the TPM signed (`certInfo`: the key's
/// name and, as `extraData`, the hash of this ceremony's data) and the signature.
struct TPMAttestation: AttestationStatementFormat {
    let identifier = "tpm"
    static let role = "AIK"
    /// `tcg-kp-AIKCertificate`: the certified key is an attestation identity key.
    static let aikCertificateUsage: ASN1ObjectIdentifier = [2, 23, 133, 8, 3]
    /// `tcg-at-tpmManufacturer`, `tcg-at-tpmModel`, `tcg-at-tpmVersion`: what the AIK
    /// certificate's subject alternative name must say about the TPM.
    static let tpmAttributes: Set<ASN1ObjectIdentifier> = [[2, 23, 133, 2, 1], [2, 23, 133, 2, 2], [2, 23, 133, 2, 3]]

    func verify(
        statement: CBORMap, authenticatorData: AuthenticatorData, clientDataHash: [UInt8], at date: Date
    ) throws(AttestationFailure) -> VerifiedAttestation {
        let credential = try AttestationStatementMembers.attestedCredential(authenticatorData)
        try Self.version(in: statement)
        let algorithm = try AttestationStatementMembers.algorithm(in: statement)
        let certificates = try AttestationCertificates(in: statement)
        let signature = try AttestationStatementMembers.signature(in: statement)
        let certInfoBytes = try Self.bytes("certInfo", in: statement)
        let pubArea = try TPMPublic(parsing: try Self.bytes("pubArea", in: statement))
        try Self.publicArea(pubArea, holds: credential.publicKey)
        let certInfo = try TPMAttest(parsing: certInfoBytes)
        try Self.magic(of: certInfo)
        try Self.type(of: certInfo)
        try Self.extraData(of: certInfo, hashes: authenticatorData.bytes + clientDataHash, with: algorithm)
        try Self.attestedName(try certInfo.certifyInfo(), isNameOf: pubArea)
        try AttestationStatementMembers.signature(
            signature, over: certInfoBytes, verifiedBy: certificates.leafKey, algorithm: algorithm, signer: "AIK certificate")
        let aik = certificates.leaf
        try AttestationCertificateRules.isVersion3(aik, role: Self.role)
        try Self.emptySubject(of: aik)
        try Self.subjectAlternativeName(of: aik)
        try Self.extendedKeyUsage(of: aik)
        try AttestationCertificateRules.isNotCA(aik, role: Self.role)
        try AttestationCertificateRules.aaguidExtension(of: aik, matches: credential.aaguid, role: Self.role)
        try AttestationCertificateRules.isValid(aik, at: date, role: Self.role)
        return VerifiedAttestation(format: identifier, kind: .attestationCA, certificateChain: certificates.chain)
    }

    /// `ver` is "2.0": the structures below are TPM 2.0's.
    static func version(in statement: CBORMap) throws(AttestationFailure) {
        guard let version = statement[text: "ver"]?.text else { throw AttestationFailure("ver is missing or not text") }
        guard version == "2.0" else { throw AttestationFailure("ver \"\(version)\" is not \"2.0\"") }
    }

    static func bytes(_ member: String, in statement: CBORMap) throws(AttestationFailure) -> [UInt8] {
        guard let bytes = statement[text: member]?.bytes else { throw AttestationFailure("\(member) is missing or not a byte string") }
        return bytes
    }

    /// The key in `pubArea` is the credential key: same type, same numbers (compared as
    /// unsigned integers, so a leading zero byte in either encoding does not matter).
    static func publicArea(_ pubArea: TPMPublic, holds key: COSEKey) throws(AttestationFailure) {
        let same: Bool
        switch (pubArea.key, key.material) {
        case (.rsa(let modulus, let exponent), .rsa(let n, let e)):
            let exponentBytes = withUnsafeBytes(of: exponent.bigEndian) { Array($0) }
            same = integer(modulus) == integer(n) && integer(exponentBytes) == integer(e)
        case (.ecc(let curve, let x, let y), .ec2(let crv, let keyX, let keyY)):
            same = coseCurve(ofTPMCurve: curve) == crv && integer(x) == integer(keyX) && integer(y) == integer(keyY)
        default:
            same = false
        }
        guard same else { throw AttestationFailure("pubArea's key is not the credential public key") }
    }

    /// `magic` is `TPM_GENERATED_VALUE`: the TPM, not a caller, produced the structure it signed.
    static func magic(of certInfo: TPMAttest) throws(AttestationFailure) {
        guard certInfo.magic == TPMAttest.generatedValue else { throw AttestationFailure("certInfo magic is not TPM_GENERATED_VALUE") }
    }

    /// `type` is `TPM_ST_ATTEST_CERTIFY`: the TPM certified a key it holds.
    static func type(of certInfo: TPMAttest) throws(AttestationFailure) {
        guard certInfo.type == TPMAttest.certifyType else { throw AttestationFailure("certInfo type is not TPM_ST_ATTEST_CERTIFY") }
    }

    /// `extraData` is the hash, with `alg`'s hash function, of `authenticatorData ‖
    /// clientDataHash`: the certification was made for this ceremony.
    static func extraData(of certInfo: TPMAttest, hashes signedData: [UInt8], with algorithm: COSEAlgorithm) throws(AttestationFailure) {
        guard let hash = hashAlgorithm(of: algorithm) else {
            throw AttestationFailure("alg \(algorithm.name) is not an algorithm a TPM signs with")
        }
        guard certInfo.extraData == hash.digest(signedData) else {
            throw AttestationFailure("certInfo extraData is not the hash of the authenticator data and client data hash")
        }
    }

    /// `attested.name` is `pubArea`'s name, computed with `pubArea.nameAlg` (which may differ
    /// from `alg`): the key the TPM certified is the one in `pubArea`.
    static func attestedName(_ certifyInfo: TPMCertifyInfo, isNameOf pubArea: TPMPublic) throws(AttestationFailure) {
        guard certifyInfo.name == pubArea.name else { throw AttestationFailure("certInfo attested name is not pubArea's name") }
    }

    /// §8.3.1: the AIK certificate's subject is empty; the TPM is named in the SAN instead.
    static func emptySubject(of aik: Certificate) throws(AttestationFailure) {
        guard aik.subject.isEmpty else { throw AttestationFailure("the AIK certificate's subject is not empty") }
    }

    /// §8.3.1 and the TCG EK credential profile §3.2.9: a critical subject alternative name
    /// (critical because the subject is empty, RFC 5280 §4.2.1.6) holding a directory name with
    /// the TPM's manufacturer, model and version.
    static func subjectAlternativeName(of aik: Certificate) throws(AttestationFailure) {
        guard let extensionValue = aik.extensions[oid: .X509ExtensionID.subjectAlternativeName] else {
            throw AttestationFailure("the AIK certificate has no subject alternative name")
        }
        guard extensionValue.critical else { throw AttestationFailure("the AIK certificate's subject alternative name is not critical") }
        let names: SubjectAlternativeNames
        do {
            names = try SubjectAlternativeNames(extensionValue)
        } catch {
            throw AttestationFailure("the AIK certificate's subject alternative name is malformed")
        }
        let attributes = Set(names.flatMap { name -> [ASN1ObjectIdentifier] in
            guard case .directoryName(let directoryName) = name else { return [] }
            return directoryName.flatMap { $0 }.map(\.type)
        })
        guard tpmAttributes.isSubset(of: attributes) else {
            throw AttestationFailure("the AIK certificate's subject alternative name does not name the TPM manufacturer, model and version")
        }
    }

    /// §8.3.1: the extended key usage includes `tcg-kp-AIKCertificate`.
    static func extendedKeyUsage(of aik: Certificate) throws(AttestationFailure) {
        let usages: ExtendedKeyUsage?
        do {
            usages = try aik.extensions.extendedKeyUsage
        } catch {
            throw AttestationFailure("the AIK certificate's extended key usage is malformed")
        }
        guard let usages, usages.contains(ExtendedKeyUsage.Usage(oid: aikCertificateUsage)) else {
            throw AttestationFailure("the AIK certificate's extended key usage lacks tcg-kp-AIKCertificate (2.23.133.8.3)")
        }
    }

    /// The hash a TPM applies when signing with `algorithm`, which `extraData` uses too.
    static func hashAlgorithm(of algorithm: COSEAlgorithm) -> TPMHashAlgorithm? {
        switch algorithm {
        case .rs1: .sha1
        case .es256, .rs256, .ps256: .sha256
        case .es384: .sha384
        case .es512: .sha512
        case .edDSA: nil
        }
    }

    /// `TPM_ECC_NIST_P256`, `_P384`, `_P521` as COSE curves.
    static func coseCurve(ofTPMCurve curve: UInt16) -> Int64? {
        switch curve {
        case 0x0003: 1
        case 0x0004: 2
        case 0x0005: 3
        default: nil
        }
    }

    /// Big-endian bytes without their leading zeros, to compare as unsigned integers.
    private static func integer(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        bytes.drop(while: { $0 == 0 })
    }
}
