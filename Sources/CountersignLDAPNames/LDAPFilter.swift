/// A search filter (RFC 4515). Filters an administrator configures are taken as written; values
/// that come from outside (a username typed at a login prompt) enter only through `equality`,
/// which escapes them, so that a username of `*` or `admin)(uid=*` matches nobody instead of
/// everybody.
///
/// ```swift
/// let filter = LDAPFilter.and([LDAPFilter("(objectClass=person)"), .equality("uid", typedName)])
/// ```
public struct LDAPFilter: Sendable, Hashable, CustomStringConvertible {
    /// The filter's text, as libldap takes it.
    public let text: String

    /// A filter as an administrator wrote it: not escaped, not checked here (the directory
    /// client reports one that does not parse).
    public init(_ text: String) {
        self.text = text
    }

    public var description: String { text }

    /// `(attribute=value)` with `value` escaped: it matches entries whose attribute equals it,
    /// and nothing in it is read as filter syntax. `attribute` is configuration, not input.
    public static func equality(_ attribute: String, _ value: String) -> LDAPFilter {
        LDAPFilter("(\(attribute)=\(escape(value)))")
    }

    /// `(attribute=…)` with every octet of a binary value escaped (an `objectGUID`).
    public static func equality(_ attribute: String, octets: [UInt8]) -> LDAPFilter {
        let digits = Array("0123456789abcdef".utf8)
        var escaped: [UInt8] = []
        for octet in octets {
            escaped += [UInt8(ascii: "\\"), digits[Int(octet >> 4)], digits[Int(octet & 0x0F)]]
        }
        return LDAPFilter("(\(attribute)=\(String(decoding: escaped, as: UTF8.self)))")
    }

    /// Entries that match every one of `filters`.
    public static func and(_ filters: [LDAPFilter]) -> LDAPFilter {
        LDAPFilter("(&" + filters.map(\.text).joined() + ")")
    }

    /// `value` escaped for an assertion value (RFC 4515 §3): `*`, `(`, `)`, `\` and NUL become
    /// `\2a`, `\28`, `\29`, `\5c` and `\00`; everything else, UTF-8 included, stays as it is.
    public static func escape(_ value: String) -> String {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "*"): escaped += Array(#"\2a"#.utf8)
            case UInt8(ascii: "("): escaped += Array(#"\28"#.utf8)
            case UInt8(ascii: ")"): escaped += Array(#"\29"#.utf8)
            case UInt8(ascii: "\\"): escaped += Array(#"\5c"#.utf8)
            case 0: escaped += Array(#"\00"#.utf8)
            default: escaped.append(byte)
            }
        }
        // Only ASCII replaced ASCII: still UTF-8.
        return String(decoding: escaped, as: UTF8.self)
    }
}
