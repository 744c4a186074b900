/// Reads the subject common name out of a DER certificate.
///
/// NIOSSL does not expose the subject, and this target should not take a whole X.509 library
/// for one field, so the few DER structures on the way to it are walked here:
/// `Certificate → TBSCertificate → subject Name → RDN → AttributeTypeAndValue(2.5.4.3)`.
enum CertificateSubject {
    /// The DER encoding of the object identifier 2.5.4.3 (id-at-commonName).
    private static let commonNameOID: [UInt8] = [0x55, 0x04, 0x03]

    /// The last (most specific) common name in the subject, or nil when there is none or the
    /// encoding is not what a certificate looks like.
    static func commonName(der: [UInt8]) -> String? {
        guard let certificate = DERElement.first(in: der[...]), certificate.tag == 0x30,
              let tbs = DERElement.first(in: certificate.content), tbs.tag == 0x30 else { return nil }
        var fields = DERElement.all(in: tbs.content)
        // The version is the optional explicit [0] in front of the serial number.
        if fields.first?.tag == 0xA0 { fields.removeFirst() }
        // serialNumber, signature, issuer, validity, subject
        guard fields.count > 4, fields[4].tag == 0x30 else { return nil }
        var name: String?
        for relativeName in DERElement.all(in: fields[4].content) where relativeName.tag == 0x31 {
            for attribute in DERElement.all(in: relativeName.content) where attribute.tag == 0x30 {
                let parts = DERElement.all(in: attribute.content)
                guard parts.count == 2, parts[0].tag == 0x06, Array(parts[0].content) == commonNameOID else { continue }
                name = String(decoding: parts[1].content, as: UTF8.self)
            }
        }
        return name
    }
}

/// One tag-length-value element of DER, with a single-byte tag (all a Name needs).
private struct DERElement {
    var tag: UInt8
    var content: ArraySlice<UInt8>
    /// Where the next element begins.
    var end: Int

    static func first(in bytes: ArraySlice<UInt8>) -> DERElement? {
        var index = bytes.startIndex
        guard index < bytes.endIndex else { return nil }
        let tag = bytes[index]
        index += 1
        guard index < bytes.endIndex else { return nil }
        var length = Int(bytes[index])
        index += 1
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard (1...4).contains(count), index + count <= bytes.endIndex else { return nil }
            length = bytes[index..<index + count].reduce(0) { $0 << 8 | Int($1) }
            index += count
        }
        guard length <= bytes.endIndex - index else { return nil }
        return DERElement(tag: tag, content: bytes[index..<index + length], end: index + length)
    }

    static func all(in bytes: ArraySlice<UInt8>) -> [DERElement] {
        var elements: [DERElement] = []
        var rest = bytes
        while let element = first(in: rest) {
            elements.append(element)
            rest = bytes[element.end...]
        }
        return elements
    }
}
