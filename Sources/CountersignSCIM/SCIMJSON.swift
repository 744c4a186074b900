import Foundation

/// A JSON value as SCIM bodies and filters carry it.
///
/// Not `CountersignCore.JSONValue`: that one is integers only, because it is signed canonically,
/// while SCIM has a `decimal` type (RFC 7643 §2.3.3) and filters compare numbers such as `1.5`.
/// Integers and decimals are kept apart so that an `integer` attribute never reads `2.0`.
public enum SCIMJSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case decimal(Double)
    case string(String)
    case array([SCIMJSON])
    case object([String: SCIMJSON])

    /// Parses JSON text strictly (RFC 8259, with duplicate member names and deep nesting refused).
    ///
    /// ```swift
    /// let body = try SCIMJSON(parsing: Data(#"{"userName":"bjensen"}"#.utf8))
    /// ```
    public init(parsing data: Data) throws(SCIMError) {
        self = try SCIMJSONReader.parse(Array(data))
    }

    /// The member of an object whose name matches `name` without regard to case: SCIM attribute
    /// names are case-insensitive (RFC 7643 §2.1), and identity providers do not agree on case.
    public subscript(caseInsensitive name: String) -> SCIMJSON? {
        guard case .object(let members) = self else { return nil }
        if let exact = members[name] { return exact }
        return members.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var objectValue: [String: SCIMJSON]? {
        if case .object(let members) = self { return members }
        return nil
    }

    public var arrayValue: [SCIMJSON]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The JSON type's name as error details say it.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .decimal: "a decimal"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// JSON text with members sorted by name, so that the same document is always the same bytes
    /// (ETags and tests compare them).
    public var serialized: Data { Data(text.utf8) }

    /// The same as `serialized`, as a string.
    public var text: String {
        var out = ""
        write(into: &out)
        return out
    }

    private func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        case .decimal(let value):
            // JSON has no infinities or NaN; the reader never makes them, so only a caller could.
            out += value.isFinite ? "\(value)" : "null"
        case .string(let value): Self.writeString(value, into: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, into: &out)
                out += ":"
                members[key]!.write(into: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ value: String, into out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

extension SCIMJSON: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(arrayLiteral elements: SCIMJSON...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
    public init(dictionaryLiteral elements: (String, SCIMJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
