import Foundation
import SwiftASN1

/// What can be seen of a PKCS#12 file (RFC 7292) without its password: whether it is one, and
/// whether it carries a private key outside encrypted content.
///
/// Why this exists: NIOSSL's `NIOSSLPKCS12Bundle` stops the process (`fatalError`) when a file
/// opens with its password but holds no private key, or no certificate that matches the key.
/// An administrator's upload must never take the server down, so a file is handed to NIOSSL only
/// once this walk has found a key bag. Exporters (openssl, Keychain Access, Windows) put the
/// key's shrouded bag in plain `data` content and the certificates in `encryptedData`; a key
/// hidden inside encrypted content is refused with a message that says so.
struct PKCS12Contents: Sendable {
    /// Whether a `keyBag` or `pkcs8ShroudedKeyBag` sits in unencrypted content.
    let hasVisibleKeyBag: Bool
    /// Whether some content is encrypted (and so could not be looked into).
    let hasEncryptedContent: Bool

    private static let data = try! ASN1ObjectIdentifier(dotRepresentation: "1.2.840.113549.1.7.1")
    private static let encryptedData = try! ASN1ObjectIdentifier(dotRepresentation: "1.2.840.113549.1.7.6")
    private static let keyBag = try! ASN1ObjectIdentifier(dotRepresentation: "1.2.840.113549.1.12.10.1.1")
    private static let shroudedKeyBag = try! ASN1ObjectIdentifier(dotRepresentation: "1.2.840.113549.1.12.10.1.2")
    private static let explicitZero = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)

    /// Nil when `bytes` is not a PKCS#12 PFX structure.
    init?(_ bytes: [UInt8]) {
        guard let pfx = try? BER.parse(bytes), case .constructed(let fields) = pfx.content else { return nil }
        var iterator = fields.makeIterator()
        // PFX ::= SEQUENCE { version INTEGER (v3), authSafe ContentInfo, macData MacData OPTIONAL }
        guard let version = iterator.next(), version.identifier == .integer,
              let authSafe = iterator.next(),
              let (type, content) = Self.contentInfo(authSafe), type == Self.data,
              let safes = try? BER.parse(content), case .constructed(let contentInfos) = safes.content else { return nil }
        var visibleKey = false
        var encrypted = false
        for info in contentInfos {
            guard let (type, content) = Self.contentInfo(info) else { return nil }
            if type == Self.encryptedData {
                encrypted = true
            } else if type == Self.data {
                guard let bags = try? BER.parse(content), case .constructed(let safeBags) = bags.content else { return nil }
                for bag in safeBags {
                    guard case .constructed(let bagFields) = bag.content,
                          let bagID = bagFields.first(where: { _ in true }),
                          let oid = try? ASN1ObjectIdentifier(berEncoded: bagID) else { return nil }
                    if oid == Self.keyBag || oid == Self.shroudedKeyBag { visibleKey = true }
                }
            }
        }
        hasVisibleKeyBag = visibleKey
        hasEncryptedContent = encrypted
    }

    /// `ContentInfo ::= SEQUENCE { contentType OID, content [0] EXPLICIT ANY }`: the type, and
    /// for `data` the bytes of its OCTET STRING (empty for other types).
    private static func contentInfo(_ node: ASN1Node) -> (ASN1ObjectIdentifier, [UInt8])? {
        guard case .constructed(let fields) = node.content else { return nil }
        var iterator = fields.makeIterator()
        guard let typeNode = iterator.next(), let type = try? ASN1ObjectIdentifier(berEncoded: typeNode) else { return nil }
        guard type == data else { return (type, []) }
        guard let wrapper = iterator.next(), wrapper.identifier == explicitZero,
              case .constructed(let inner) = wrapper.content, let octets = inner.first(where: { _ in true }),
              let bytes = octetString(octets) else { return nil }
        return (type, bytes)
    }

    /// An OCTET STRING's bytes; BER allows it to arrive in constructed chunks.
    private static func octetString(_ node: ASN1Node) -> [UInt8]? {
        guard node.identifier == .octetString else { return nil }
        switch node.content {
        case .primitive(let bytes):
            return Array(bytes)
        case .constructed(let chunks):
            var bytes: [UInt8] = []
            for chunk in chunks {
                guard let part = octetString(chunk) else { return nil }
                bytes += part
            }
            return bytes
        }
    }
}
