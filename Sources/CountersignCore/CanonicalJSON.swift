import Foundation

/// A JSON value with one canonical serialisation: RFC 8785 (JCS) restricted to integers.
///
/// Signatures in the device protocol are computed over bytes, and a server in Swift and an
/// authenticator in Kotlin must produce the same bytes for the same value. Object members are
/// sorted by their UTF-16 code units, no insignificant white space is written, and strings are
/// escaped exactly as JCS says. Non-integer numbers are not part of the protocol and are refused.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The canonical bytes of this value.
    public var canonicalData: Data { Data(canonicalString.utf8) }

    /// The canonical text of this value.
    public var canonicalString: String {
        var out = ""
        write(into: &out)
        return out
    }

    private func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        case .string(let value): JSONValue.writeString(value, into: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            let keys = members.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
            for (index, key) in keys.enumerated() {
                if index > 0 { out += "," }
                JSONValue.writeString(key, into: &out)
                out += ":"
                members[key]!.write(into: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ value: String, into out: inout String) {
        out += "\""
        // Most strings need no escape and are copied whole.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += value
            out += "\""
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
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

    /// Parses JSON text into a value. Fractional or out-of-range numbers are refused, and so are
    /// objects that name a member twice: JCS input is I-JSON, which forbids duplicate names
    /// (RFC 7493 §2.3), and so does JWS for headers (RFC 7515 §5.2); parsers that keep the first
    /// and parsers that keep the last would otherwise read different values from the same bytes.
    public init(parsing data: Data) throws(JSONParseError) {
        self = try JSONParser.parse(data)
    }

    /// Whether an object in `data`, text JSONDecoder has already accepted, names a member twice.
    /// Every decoder of protocol messages asks this, so that no message means one thing to one
    /// parser and another to the next.
    public static func hasDuplicateMemberNames(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        var isObject: [Bool] = []  // one entry per open container
        var names: [Set<String>] = []  // one entry per open object
        var expectingName = false
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"):
                isObject.append(true)
                names.append([])
                expectingName = true
            case UInt8(ascii: "["):
                isObject.append(false)
                expectingName = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if isObject.popLast() == true { names.removeLast() }
                expectingName = false
            case UInt8(ascii: ","):
                expectingName = isObject.last == true
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard expectingName, index < bytes.count else { break }
                // Decoded, so that "a" and "\u0061" are the same name.
                let token = bytes[start...index]
                let name = token.contains(UInt8(ascii: "\\"))
                    ? (try? JSONDecoder().decode(String.self, from: Data(token))) ?? String(decoding: token, as: UTF8.self)
                    : String(decoding: token.dropFirst().dropLast(), as: UTF8.self)
                guard names[names.count - 1].insert(name).inserted else { return true }
                expectingName = false
            default:
                break
            }
            index += 1
        }
        return false
    }

    /// The member of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "only null, booleans, integers, strings, arrays and objects are allowed")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue {
    /// Converts any `Encodable` value to a `JSONValue` (through JSONEncoder), so that protocol
    /// messages can be signed in canonical form.
    public init(encoding value: some Encodable) throws {
        let data = try JSONEncoder().encode(value)
        self = try JSONValue(parsing: data)
    }

    /// Decodes this value as a `Decodable` type.
    public func decode<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: canonicalData)
    }
}
