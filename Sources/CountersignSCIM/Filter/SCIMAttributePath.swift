import Foundation

/// An attribute named in a filter or a PATCH path: `userName`, `name.familyName`,
/// `urn:ietf:params:scim:schemas:core:2.0:User:userName` (RFC 7644 §3.10).
///
/// Names keep the spelling they came in, for error details, but compare without regard to case,
/// as attribute names do (RFC 7643 §2.1).
public struct SCIMAttributePath: Sendable, Hashable, CustomStringConvertible {
    /// The schema URN the path was qualified with, if it was.
    public var schema: String?
    public var name: String
    public var subAttribute: String?

    public init(schema: String? = nil, name: String, subAttribute: String? = nil) {
        self.schema = schema
        self.name = name
        self.subAttribute = subAttribute
    }

    /// Reads `[URI ":"] ATTRNAME ["." subAttr]`; nil if `text` is not one.
    ///
    /// The schema is everything before the last colon, since URNs hold colons and dots of their
    /// own (`…:core:2.0:User:name.givenName`).
    init?(_ text: Substring) {
        var rest = text
        if let colon = text.lastIndex(of: ":") {
            let schema = text[..<colon]
            guard schema.lowercased().hasPrefix("urn:"), !schema.contains("$") else { return nil }
            self.schema = String(schema)
            rest = text[text.index(after: colon)...]
        }
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy(Self.isAttributeName) else { return nil }
        name = String(parts[0])
        subAttribute = parts.count == 2 ? String(parts[1]) : nil
    }

    /// `ATTRNAME = ALPHA *(nameChar)` (RFC 7644 §3.10), and `$ref`, which RFC 7643 names
    /// attributes with.
    static func isAttributeName(_ text: Substring) -> Bool {
        guard let first = text.utf8.first else { return false }
        guard isLetter(first) || first == UInt8(ascii: "$") else { return false }
        return text.utf8.dropFirst().allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// Whether this path names `name` (and `subAttribute`), in any case.
    public func names(_ name: String, _ subAttribute: String? = nil) -> Bool {
        Self.same(self.name, name) && Self.same(self.subAttribute, subAttribute)
    }

    static func same(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): a.caseInsensitiveCompare(b) == .orderedSame
        default: false
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        same(lhs.schema, rhs.schema) && same(lhs.name, rhs.name) && same(lhs.subAttribute, rhs.subAttribute)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(schema?.lowercased())
        hasher.combine(name.lowercased())
        hasher.combine(subAttribute?.lowercased())
    }

    public var description: String {
        (schema.map { $0 + ":" } ?? "") + name + (subAttribute.map { "." + $0 } ?? "")
    }
}
