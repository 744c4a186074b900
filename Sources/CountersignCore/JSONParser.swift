import Foundation

/// Why JSON text was refused, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset at which the text stopped making sense.
    public let offset: Int
    public let reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

/// A strict RFC 8259 parser for the values `JSONValue` holds, in one pass over the bytes.
///
/// Stricter than JSON itself where the protocol needs it: numbers must be integers that fit in
/// 64 bits, an object may not name a member twice (RFC 7493 §2.3; RFC 7515 §5.2), strings must
/// be well-formed UTF-8 without lone surrogate escapes, and nesting is limited. Every signed
/// message is parsed here, so it works on the bytes directly rather than through `Codable`.
struct JSONParser {
    /// Deeper nesting than any protocol message has; it bounds the recursion.
    static let maximumDepth = 64

    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    static func parse(_ data: Data) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = data.withUnsafeBytes { buffer in
            var parser = JSONParser(bytes: buffer)
            return Result { () throws(JSONParseError) -> JSONValue in
                parser.skipWhiteSpace()
                let value = try parser.value(depth: 0)
                parser.skipWhiteSpace()
                guard parser.index == buffer.count else { throw parser.failure("text follows the value") }
                return value
            }
        }
        return try result.get()
    }

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private func failure(_ reason: String) -> JSONParseError {
        JSONParseError(offset: index, reason: reason)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhiteSpace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw failure("a value was expected") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .integer(try integer())
        default: throw failure("a value was expected")
        }
    }

    private mutating func literal(_ word: String) throws(JSONParseError) {
        for expected in word.utf8 {
            guard current == expected else { throw failure("unknown literal") }
            index += 1
        }
    }

    private mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw failure("nested too deeply") }
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhiteSpace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            guard current == UInt8(ascii: "\"") else { throw failure("a member name was expected") }
            let nameOffset = index
            let name = try string()
            skipWhiteSpace()
            guard current == UInt8(ascii: ":") else { throw failure("':' was expected") }
            index += 1
            skipWhiteSpace()
            let member = try value(depth: depth)
            guard members.updateValue(member, forKey: name) == nil else {
                throw JSONParseError(offset: nameOffset, reason: "the object names \"\(name)\" more than once")
            }
            skipWhiteSpace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhiteSpace()
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default:
                throw failure("',' or '}' was expected")
            }
        }
    }

    private mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw failure("nested too deeply") }
        index += 1
        var elements: [JSONValue] = []
        skipWhiteSpace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try value(depth: depth))
            skipWhiteSpace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhiteSpace()
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default:
                throw failure("',' or ']' was expected")
            }
        }
    }

    /// `-?(0|[1-9][0-9]*)`, in the range of `Int64`; a fraction or an exponent is refused.
    private mutating func integer() throws(JSONParseError) -> Int64 {
        let negative = current == UInt8(ascii: "-")
        if negative { index += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw failure("a digit was expected")
        }
        // Accumulated as a negative number, whose range includes Int64.min.
        var value: Int64 = 0
        if first == UInt8(ascii: "0") {
            index += 1
        } else {
            while let digit = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) {
                let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
                let (next, overflowB) = shifted.subtractingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
                guard !overflowA, !overflowB else { throw failure("the number does not fit in 64 bits") }
                value = next
                index += 1
            }
        }
        if let next = current, next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E")
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) {
            throw failure("not an integer in canonical JSON form (no fraction, exponent or leading zero)")
        }
        if negative { return value }
        guard value != .min else { throw failure("the number does not fit in 64 bits") }
        return -value
    }

    private mutating func string() throws(JSONParseError) -> String {
        index += 1
        let start = index
        // The common case: no escapes, so the bytes are the string.
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw failure("a control character must be escaped") }
            index += 1
        }
        guard let stop = current else { throw failure("the string is not terminated") }
        var utf8 = [UInt8](bytes[start..<index])
        if stop == UInt8(ascii: "\\") {
            try unescape(into: &utf8)
        }
        index += 1  // the closing quote
        guard let text = String(validating: utf8, as: UTF8.self) else {
            throw JSONParseError(offset: start, reason: "the string is not valid UTF-8")
        }
        return text
    }

    /// Reads the rest of a string that contains escapes, up to its closing quote.
    private mutating func unescape(into utf8: inout [UInt8]) throws(JSONParseError) {
        while let byte = current, byte != UInt8(ascii: "\"") {
            guard byte >= 0x20 else { throw failure("a control character must be escaped") }
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                index += 1
                continue
            }
            index += 1
            guard let escaped = current else { break }
            index += 1
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = UInt32(try hexQuad())
                if (0xD800...0xDBFF).contains(scalar) {
                    guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                        throw failure("a high surrogate must be followed by a low one")
                    }
                    index += 2
                    let low = UInt32(try hexQuad())
                    guard (0xDC00...0xDFFF).contains(low) else { throw failure("a high surrogate must be followed by a low one") }
                    scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw failure("a low surrogate without a high one")
                }
                utf8.append(contentsOf: String(Unicode.Scalar(scalar)!).utf8)
            default:
                throw failure("unknown escape")
            }
        }
        guard current == UInt8(ascii: "\"") else { throw failure("the string is not terminated") }
    }

    private mutating func hexQuad() throws(JSONParseError) -> UInt16 {
        guard index + 4 <= bytes.count else { throw failure("\\u needs four hex digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("\\u needs four hex digits")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }
}
