/// An address mail can be sent to and from: a dot-atom local part (RFC 5322 §3.2.3) and a host
/// name, in ASCII, at most 254 characters. Quoted local parts, address literals and
/// internationalised addresses (SMTPUTF8) are refused: they are rare, and each is a way to smuggle
/// something into an SMTP command or a header.
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    public let localPart: String
    public let domain: String

    public var description: String { localPart + "@" + domain }

    /// `atext` of RFC 5322 §3.2.3, besides letters and digits.
    private static let atextSymbols = Set("!#$%&'*+-/=?^_`{|}~".utf8)

    public init(_ raw: String) throws(MailError) {
        let bytes = Array(raw.utf8)
        guard let at = bytes.lastIndex(of: UInt8(ascii: "@")), bytes.count <= 254 else {
            throw .invalidAddress(raw, "must be an address such as ada@example.com, at most 254 characters")
        }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...]
        guard !local.isEmpty, local.count <= 64,
              local.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).allSatisfy({ atom in
                  !atom.isEmpty && atom.allSatisfy { Self.isLetterOrDigit($0) || Self.atextSymbols.contains($0) }
              }) else {
            throw .invalidAddress(raw, "has a local part that is not a dot-atom of ASCII letters, digits and !#$%&'*+-/=?^_`{|}~")
        }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 1, labels.allSatisfy({ label in
            (1...63).contains(label.count) && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                && label.allSatisfy { Self.isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }
        }) else {
            throw .invalidAddress(raw, "has a domain that is not a host name of ASCII letters, digits and hyphens")
        }
        localPart = String(decoding: local, as: UTF8.self)
        self.domain = String(decoding: domain, as: UTF8.self)
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
