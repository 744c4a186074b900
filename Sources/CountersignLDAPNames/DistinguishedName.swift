/// A distinguished name as a directory writes it (RFC 4514): relative distinguished names from
/// the entry itself up to the root, each one or more `type=value` pairs joined by `+`.
///
/// Directories send DNs in `memberOf`, `member` and every entry's own name, and a user source
/// names a group by the value of its first RDN (`cn=VPN Users,ou=Groups,…` is "VPN Users"), so
/// the escapes must be undone exactly: `\,` and `\2C` are both a comma, `\E2\82\AC` is "€", and
/// `cn="Smith, John"` (the quoted form of RFC 2253's predecessors, which some directories still
/// write) is one value. Nothing here trusts the text: it is read byte by byte, never traps, and is
/// fuzzed (`Fuzz/Sources/FuzzLDAPNames`).
///
/// ```swift
/// let group = try DistinguishedName(parsing: #"cn=Sales\, EMEA,ou=Groups,dc=example,dc=com"#)
/// group.leafValue   // "Sales, EMEA"
/// group.description // #"cn=Sales\, EMEA,ou=Groups,dc=example,dc=com"#
/// ```
public struct DistinguishedName: Sendable, Hashable, CustomStringConvertible {
    /// One `type=value` pair. The type is kept as written (`CN`, `cn` or `2.5.4.3`); the value is
    /// unescaped. A value written in hex (`#04024869`) that is a BER string is that string;
    /// any other hex value stays as written, `#` included.
    public struct Attribute: Sendable, Hashable {
        public var type: String
        public var value: String

        public init(type: String, value: String) {
            self.type = type
            self.value = value
        }
    }

    /// The RDNs, the entry's own first; each holds at least one attribute. Empty for the empty DN
    /// (the root).
    public var rdns: [[Attribute]]

    public init(rdns: [[Attribute]]) {
        self.rdns = rdns
    }

    /// Reads `text`, accepting what RFC 4514 allows and, as its section 3 asks of readers, the
    /// older forms directories still send: spaces around `,`, `+` and `=`, `;` between RDNs,
    /// quoted values.
    public init(parsing text: String) throws(DistinguishedNameError) {
        var reader = DistinguishedNameReader(bytes: Array(text.utf8))
        rdns = try reader.read()
    }

    /// The value of the first attribute of the first RDN: the entry's own name (a group's `cn`,
    /// a user's `uid`), or nil for the empty DN.
    public var leafValue: String? { rdns.first?.first?.value }

    /// The DN in RFC 4514's form, each value escaped so that it reads back as the same DN.
    public var description: String {
        rdns.map { rdn in
            rdn.map { "\($0.type)=\(Self.escape($0.value))" }.joined(separator: "+")
        }.joined(separator: ",")
    }

    /// `value` escaped for a DN (RFC 4514 §2.4): the characters that separate or quote
    /// (`"+,;<>\`), a leading `#` or space, a trailing space, and NUL.
    ///
    /// ```swift
    /// "cn=" + DistinguishedName.escape("Smith, John")  // #"cn=Smith\, John"#
    /// ```
    public static func escape(_ value: String) -> String {
        let bytes = Array(value.utf8)
        var escaped: [UInt8] = []
        escaped.reserveCapacity(bytes.count)
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
                 UInt8(ascii: "<"), UInt8(ascii: ">"):
                escaped += [UInt8(ascii: "\\"), byte]
            case 0:
                escaped += Array(#"\00"#.utf8)
            case UInt8(ascii: "#") where index == 0:
                escaped += [UInt8(ascii: "\\"), byte]
            case UInt8(ascii: " ") where index == 0 || index == bytes.count - 1:
                escaped += [UInt8(ascii: "\\"), byte]
            default:
                escaped.append(byte)
            }
        }
        // Only ASCII was inserted, at positions between whole characters: still UTF-8.
        return String(decoding: escaped, as: UTF8.self)
    }
}

/// Why a DN could not be read; `offset` is the byte in its UTF-8 where reading stopped.
public enum DistinguishedNameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An attribute type that is neither a name (`cn`) nor a dotted OID (`2.5.4.3`).
    case invalidAttributeType(offset: Int)
    /// A type with no `=` after it.
    case missingEquals(offset: Int)
    /// A backslash followed by neither a special character nor two hex digits.
    case invalidEscape(offset: Int)
    /// A character RFC 4514 requires to be escaped (`"`, `<`, `>`, NUL) written as it is.
    case unescapedCharacter(offset: Int)
    /// A quoted value without its closing quote.
    case unterminatedQuote(offset: Int)
    /// `#` followed by something other than pairs of hex digits.
    case invalidHexValue(offset: Int)
    /// An escaped value whose bytes are not UTF-8.
    case invalidUTF8(offset: Int)
    /// Something after a value other than `,`, `;`, `+` or the end, or a separator with no RDN
    /// after it.
    case unexpectedCharacter(offset: Int)

    public var description: String {
        switch self {
        case .invalidAttributeType(let offset): "invalid attribute type at byte \(offset)"
        case .missingEquals(let offset): "'=' expected at byte \(offset)"
        case .invalidEscape(let offset): "invalid escape at byte \(offset)"
        case .unescapedCharacter(let offset): "character that must be escaped at byte \(offset)"
        case .unterminatedQuote(let offset): "unterminated quoted value starting at byte \(offset)"
        case .invalidHexValue(let offset): "invalid hex value at byte \(offset)"
        case .invalidUTF8(let offset): "value ending at byte \(offset) is not UTF-8"
        case .unexpectedCharacter(let offset): "unexpected character at byte \(offset)"
        }
    }
}

/// The reader behind `DistinguishedName(parsing:)`: a position in the DN's UTF-8.
struct DistinguishedNameReader {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipSpaces() {
        while current == UInt8(ascii: " ") { position += 1 }
    }

    mutating func read() throws(DistinguishedNameError) -> [[DistinguishedName.Attribute]] {
        skipSpaces()
        if current == nil { return [] }
        var rdns: [[DistinguishedName.Attribute]] = []
        var rdn: [DistinguishedName.Attribute] = []
        while true {
            rdn.append(try readAttribute())
            skipSpaces()
            switch current {
            case nil:
                rdns.append(rdn)
                return rdns
            case UInt8(ascii: "+"):
                position += 1
            case UInt8(ascii: ","), UInt8(ascii: ";"):
                rdns.append(rdn)
                rdn = []
                position += 1
            default:
                throw .unexpectedCharacter(offset: position)
            }
        }
    }

    private mutating func readAttribute() throws(DistinguishedNameError) -> DistinguishedName.Attribute {
        skipSpaces()
        let type = try readType()
        skipSpaces()
        guard current == UInt8(ascii: "=") else { throw .missingEquals(offset: position) }
        position += 1
        skipSpaces()
        let value: String
        switch current {
        case UInt8(ascii: "#"): value = try readHexValue()
        case UInt8(ascii: "\""): value = try readQuotedValue()
        default: value = try readStringValue()
        }
        return DistinguishedName.Attribute(type: type, value: value)
    }

    /// `descr` (a letter, then letters, digits and hyphens) or `numericoid` (digits and dots,
    /// no empty component).
    private mutating func readType() throws(DistinguishedNameError) -> String {
        let start = position
        guard let first = current else { throw .invalidAttributeType(offset: position) }
        if first.isASCIILetter {
            while let byte = current, byte.isASCIILetter || byte.isASCIIDigit || byte == UInt8(ascii: "-") {
                position += 1
            }
        } else if first.isASCIIDigit {
            while let byte = current, byte.isASCIIDigit || byte == UInt8(ascii: ".") {
                if byte == UInt8(ascii: "."), bytes[position - 1] == UInt8(ascii: ".") {
                    throw .invalidAttributeType(offset: position)
                }
                position += 1
            }
            if bytes[position - 1] == UInt8(ascii: ".") { throw .invalidAttributeType(offset: position - 1) }
        } else {
            throw .invalidAttributeType(offset: position)
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// `#` and hex pairs: the BER encoding of the value (RFC 4514 §2.4). A UTF8String,
    /// PrintableString or IA5String is its text; anything else keeps its written form.
    private mutating func readHexValue() throws(DistinguishedNameError) -> String {
        let start = position
        position += 1
        var encoded: [UInt8] = []
        while let high = current?.hexValue {
            guard position + 1 < bytes.count, let low = bytes[position + 1].hexValue else {
                throw .invalidHexValue(offset: position)
            }
            encoded.append(high << 4 | low)
            position += 2
        }
        guard !encoded.isEmpty else { throw .invalidHexValue(offset: position) }
        if let text = Self.berString(encoded) { return text }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// The text of a DER/BER UTF8String (12), PrintableString (19) or IA5String (22) that fills
    /// `encoded` exactly, or nil.
    static func berString(_ encoded: [UInt8]) -> String? {
        guard encoded.count >= 2, [0x0C, 0x13, 0x16].contains(encoded[0]) else { return nil }
        var length = 0
        var contentStart = 2
        if encoded[1] < 0x80 {
            length = Int(encoded[1])
        } else {
            let octets = Int(encoded[1] & 0x7F)
            guard (1...3).contains(octets), encoded.count >= 2 + octets else { return nil }
            for byte in encoded[2..<(2 + octets)] { length = length << 8 | Int(byte) }
            contentStart = 2 + octets
        }
        guard encoded.count - contentStart == length else { return nil }
        return String(validating: encoded[contentStart...], as: UTF8.self)
    }

    /// A value in double quotes: everything up to the closing quote, escapes undone.
    private mutating func readQuotedValue() throws(DistinguishedNameError) -> String {
        let start = position
        position += 1
        var value: [UInt8] = []
        while true {
            guard let byte = current else { throw .unterminatedQuote(offset: start) }
            if byte == UInt8(ascii: "\"") {
                position += 1
                break
            }
            if byte == UInt8(ascii: "\\") {
                value.append(try readEscape())
            } else {
                value.append(byte)
                position += 1
            }
        }
        guard let text = String(validating: value, as: UTF8.self) else { throw .invalidUTF8(offset: position) }
        return text
    }

    /// An unquoted value, up to an unescaped separator; spaces at its end that were not escaped
    /// belong to the separator, not the value.
    private mutating func readStringValue() throws(DistinguishedNameError) -> String {
        var value: [UInt8] = []
        var kept = 0
        while let byte = current {
            switch byte {
            case UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "+"):
                return try finish(value, kept: kept)
            case UInt8(ascii: "\\"):
                value.append(try readEscape())
                kept = value.count
            case UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), 0:
                throw .unescapedCharacter(offset: position)
            case UInt8(ascii: " "):
                value.append(byte)
                position += 1
            default:
                value.append(byte)
                kept = value.count
                position += 1
            }
        }
        return try finish(value, kept: kept)
    }

    private func finish(_ value: [UInt8], kept: Int) throws(DistinguishedNameError) -> String {
        guard let text = String(validating: value[..<kept], as: UTF8.self) else { throw .invalidUTF8(offset: position) }
        return text
    }

    /// A backslash and what follows: a special character, or two hex digits for one byte.
    private mutating func readEscape() throws(DistinguishedNameError) -> UInt8 {
        let start = position
        guard position + 1 < bytes.count else { throw .invalidEscape(offset: start) }
        let next = bytes[position + 1]
        if let high = next.hexValue {
            guard position + 2 < bytes.count, let low = bytes[position + 2].hexValue else {
                throw .invalidEscape(offset: start)
            }
            position += 3
            return high << 4 | low
        }
        guard Array(#"\"+,;<> #="#.utf8).contains(next) else { throw .invalidEscape(offset: start) }
        position += 2
        return next
    }
}

extension UInt8 {
    var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    var isASCIIDigit: Bool { (0x30...0x39).contains(self) }

    /// The value of a hex digit, either case.
    var hexValue: UInt8? {
        switch self {
        case 0x30...0x39: self - 0x30
        case 0x41...0x46: self - 0x41 + 10
        case 0x61...0x66: self - 0x61 + 10
        default: nil
        }
    }
}
