import Crypto
import Foundation
import SwiftASN1
import X509
@testable import CountersignServer

/// A throwaway attestation CA with P-256 keys, to issue the attestation certificates the
/// negative tests need: each breaks one rule and keeps every other.
struct TestAttestationCA {
    let key = P256.Signing.PrivateKey()
    let name: DistinguishedName
    let certificate: Certificate

    static let validFrom = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01
    static let validUntil = Date(timeIntervalSince1970: 1_893_456_000)  // 2030-01-01

    init() throws {
        name = try DistinguishedName {
            CountryName("AA")
            OrganizationName("Countersign tests")
            CommonName("Countersign test attestation CA")
        }
        certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: Self.validFrom, notValidAfter: Self.validUntil, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions([
                try Certificate.Extension(BasicConstraints.isCertificateAuthority(maxPathLength: nil), critical: true),
                try Certificate.Extension(KeyUsage(keyCertSign: true), critical: true),
            ]),
            issuerPrivateKey: .init(key))
    }

    /// A certificate for `subjectKey`, signed by this CA.
    func issue(
        subject: DistinguishedName, key subjectKey: Certificate.PublicKey, version: Certificate.Version = .v3,
        notValidBefore: Date = validFrom, notValidAfter: Date = validUntil, extensions: [Certificate.Extension]
    ) throws -> Certificate {
        try Certificate(
            version: version, serialNumber: .init(), publicKey: subjectKey, notValidBefore: notValidBefore,
            notValidAfter: notValidAfter, issuer: name, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions(extensions), issuerPrivateKey: .init(key))
    }

    /// The subject §8.2.1 asks of a packed attestation certificate, with parts replaceable.
    static func packedSubject(
        country: String? = "AA", organization: String? = "Countersign tests",
        unit: String? = "Authenticator Attestation", commonName: String? = "Countersign test authenticator"
    ) throws -> DistinguishedName {
        var attributes: [RelativeDistinguishedName.Attribute] = []
        if let country { attributes.append(try .init(type: .RDNAttributeType.countryName, printableString: country)) }
        if let organization { attributes.append(.init(type: .RDNAttributeType.organizationName, utf8String: organization)) }
        if let unit { attributes.append(.init(type: .RDNAttributeType.organizationalUnitName, utf8String: unit)) }
        if let commonName { attributes.append(.init(type: .RDNAttributeType.commonName, utf8String: commonName)) }
        return DistinguishedName(attributes.map { RelativeDistinguishedName($0) })
    }

    static func basicConstraints(isCA: Bool) throws -> Certificate.Extension {
        try Certificate.Extension(isCA ? .isCertificateAuthority(maxPathLength: nil) : .notCertificateAuthority, critical: true)
    }

    /// `id-fido-gen-ce-aaguid`: an OCTET STRING holding the AAGUID (the extension value wraps it
    /// once more).
    static func aaguid(_ aaguid: [UInt8], critical: Bool = false) throws -> Certificate.Extension {
        Certificate.Extension(
            oid: AttestationCertificateRules.aaguidExtension, critical: critical,
            value: try der(ASN1OctetString(contentBytes: aaguid[...])))
    }

    /// Apple's nonce extension: `SEQUENCE { [1] EXPLICIT OCTET STRING nonce }`.
    static func appleNonce(_ nonce: [UInt8]) throws -> Certificate.Extension {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(ASN1OctetString(contentBytes: nonce[...]), explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific)
        }
        return Certificate.Extension(oid: AppleAttestation.nonceExtension, critical: false, value: serializer.serializedBytes[...])
    }

    /// A TPM AIK certificate's subject alternative name: a directory name with the TPM's
    /// manufacturer, model and version (or only the attributes given).
    static func tpmSubjectAlternativeName(
        critical: Bool = true, attributes: [ASN1ObjectIdentifier] = Array(TPMAttestation.tpmAttributes)
    ) throws -> Certificate.Extension {
        let name = DistinguishedName(attributes.map { RelativeDistinguishedName(.init(type: $0, utf8String: "id:434F554E")) })
        return try Certificate.Extension(SubjectAlternativeNames([.directoryName(name)]), critical: critical)
    }

    static func extendedKeyUsage(_ oid: ASN1ObjectIdentifier = TPMAttestation.aikCertificateUsage) throws -> Certificate.Extension {
        try Certificate.Extension(ExtendedKeyUsage([.init(oid: oid)]), critical: false)
    }

    /// A certificate as `x5c` carries it.
    static func encoded(_ certificate: Certificate) throws -> [UInt8] {
        Array(try der(certificate))
    }

    static func der<Element: DERSerializable>(_ element: Element) throws -> ArraySlice<UInt8> {
        var serializer = DER.Serializer()
        try serializer.serialize(element)
        return serializer.serializedBytes[...]
    }
}
