import CountersignCBOR
import Foundation

/// Why JSON text was refused, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Whether the text is not JSON at all, or JSON with a number Countersign does not take.
    public enum Kind: Sendable, Equatable {
        case syntax
        /// Valid JSON, but a number with a fraction or an exponent, or outside 64 bits.
        case unsupportedNumber
        /// An object that names a member twice (RFC 7493 §2.3).
        case duplicateMember
    }

    /// The byte offset at which the text stopped making sense.
    public let offset: Int
    public let reason: String
    public let kind: Kind
    /// The members and elements that lead to the fault, such as `limits.pin_attempt_limit` or
    /// `[0].amount`; empty at the top level.
    public let path: String

    public init(offset: Int, reason: String, kind: Kind = .syntax, path: String = "") {
        self.offset = offset
        self.reason = reason
        self.kind = kind
        self.path = path
    }

    public var description: String {
        switch kind {
        case .syntax: "invalid JSON at byte \(offset): \(reason)"
        case .unsupportedNumber, .duplicateMember: path.isEmpty ? reason : "\(path): \(reason)"
        }
    }

    /// The same fault, seen from the container that holds it.
    func inside(member name: String) -> JSONParseError {
        JSONParseError(offset: offset, reason: reason, kind: kind, path: JSONPath.member(name, then: path))
    }

    func inside(element index: Int) -> JSONParseError {
        JSONParseError(offset: offset, reason: reason, kind: kind, path: JSONPath.element(index, then: path))
    }
}

/// Paths into a JSON value as error messages name them: `limits.pin`, `a[1].b`, `[0]`.
public enum JSONPath {
    /// `name` followed by the path `rest` inside it.
    public static func member(_ name: String, then rest: String) -> String {
        rest.isEmpty || rest.hasPrefix("[") ? name + rest : "\(name).\(rest)"
    }

    /// Element `index` followed by the path `rest` inside it.
    public static func element(_ index: Int, then rest: String) -> String {
        rest.isEmpty || rest.hasPrefix("[") ? "[\(index)]" + rest : "[\(index)].\(rest)"
    }
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
        // `withUnsafeBytes` rethrows untyped; the error comes out in a `Result`, made and opened
        // by hand because `Result(catching:)` and `get()` keep the type only in Swift 6's
        // standard library, which iOS 17 does not have.
        let result: Result<JSONValue, JSONParseError> = data.withUnsafeBytes { buffer in
            var parser = JSONParser(bytes: buffer)
            do throws(JSONParseError) {
                parser.skipWhiteSpace()
                let value = try parser.value(depth: 0)
                parser.skipWhiteSpace()
                guard parser.index == buffer.count else { throw parser.failure("text follows the value") }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error): throw error
        }
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
            let member: JSONValue
            do { member = try value(depth: depth) } catch { throw error.inside(member: name) }
            guard members.updateValue(member, forKey: name) == nil else {
                throw JSONParseError(offset: nameOffset, reason: "the object names \"\(name)\" more than once", kind: .duplicateMember)
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
            do { elements.append(try value(depth: depth)) } catch { throw error.inside(element: elements.count) }
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

    /// `-?(0|[1-9][0-9]*)`, in the range of `Int64`. A number that is valid JSON but has a
    /// fraction or an exponent, or lies outside 64 bits, is refused as such (`unsupportedNumber`),
    /// naming the number, so that nobody is told that valid JSON is not JSON.
    private mutating func integer() throws(JSONParseError) -> Int64 {
        let start = index
        let negative = current == UInt8(ascii: "-")
        if negative { index += 1 }
        guard let first = current, Self.isDigit(first) else { throw failure("a digit was expected") }
        // Accumulated as a negative number, whose range includes Int64.min.
        var value: Int64 = 0
        var overflowed = false
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = current, Self.isDigit(next) { throw failure("a number must not start with 0") }
        } else {
            while let digit = current, Self.isDigit(digit) {
                let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
                let (next, overflowB) = shifted.subtractingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
                overflowed = overflowed || overflowA || overflowB
                value = next
                index += 1
            }
        }
        var whole = true
        if current == UInt8(ascii: ".") {
            index += 1
            guard let digit = current, Self.isDigit(digit) else { throw failure("a digit was expected after '.'") }
            while let digit = current, Self.isDigit(digit) { index += 1 }
            whole = false
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, Self.isDigit(digit) else { throw failure("a digit was expected in the exponent") }
            while let digit = current, Self.isDigit(digit) { index += 1 }
            whole = false
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard whole else {
            throw JSONParseError(offset: start, reason: "the number \(text) must be a whole number, written without a fraction or exponent",
                                 kind: .unsupportedNumber)
        }
        if !negative, value == .min { overflowed = true }
        guard !overflowed else {
            throw JSONParseError(offset: start, reason: "the number \(text) does not fit in 64 bits", kind: .unsupportedNumber)
        }
        return negative ? value : -value
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

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
        guard let text = String(validUTF8: utf8) else {
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
