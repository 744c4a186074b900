/// A strict RFC 8259 reader over bytes, for request bodies and for the values in filters.
///
/// It is the part a SCIM client controls, and is fuzzed (`Fuzz/Sources/FuzzSCIM`): nesting is
/// bounded so that recursion is, and an object that names a member twice is refused, since
/// parsers that keep the first and parsers that keep the last would read different resources
/// from the same bytes.
struct SCIMJSONReader {
    /// Where the text stopped being JSON, and why.
    struct Failure: Error {
        let offset: Int
        let reason: String
    }

    /// Deeper than any SCIM resource or PatchOp request is; it bounds the recursion.
    static let maximumDepth = 32

    private let bytes: [UInt8]
    private(set) var index: Int

    init(bytes: [UInt8], index: Int = 0) {
        self.bytes = bytes
        self.index = index
    }

    /// A whole document: one value, white space around it and nothing else.
    static func parse(_ bytes: [UInt8]) throws(SCIMError) -> SCIMJSON {
        var reader = SCIMJSONReader(bytes: bytes)
        do throws(Failure) {
            reader.skipWhiteSpace()
            let value = try reader.value(depth: 0)
            reader.skipWhiteSpace()
            guard reader.index == bytes.count else { throw reader.failure("text follows the JSON value") }
            return value
        } catch {
            throw .invalidSyntax("the body is not JSON: \(error.reason) at byte \(error.offset)")
        }
    }

    private func failure(_ reason: String) -> Failure { Failure(offset: index, reason: reason) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhiteSpace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    mutating func value(depth: Int) throws(Failure) -> SCIMJSON {
        guard let byte = current else { throw failure("a value was expected") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("a value was expected")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        for index in 0..<word.utf8CodeUnitCount {
            guard current == word.utf8Start[index] else { throw failure("unknown literal") }
            self.index += 1
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> SCIMJSON {
        guard depth <= Self.maximumDepth else { throw failure("nested more than \(Self.maximumDepth) deep") }
        index += 1
        var members: [String: SCIMJSON] = [:]
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
            guard members.updateValue(try value(depth: depth), forKey: name) == nil else {
                throw Failure(offset: nameOffset, reason: "the object names \"\(name)\" twice")
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

    private mutating func array(depth: Int) throws(Failure) -> SCIMJSON {
        guard depth <= Self.maximumDepth else { throw failure("nested more than \(Self.maximumDepth) deep") }
        index += 1
        var elements: [SCIMJSON] = []
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

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`: an integer when it has neither fraction
    /// nor exponent and fits in 64 bits, a decimal otherwise.
    mutating func number() throws(Failure) -> SCIMJSON {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, Self.isDigit(first) else { throw failure("a digit was expected") }
        index += 1
        if first == UInt8(ascii: "0"), let next = current, Self.isDigit(next) {
            throw Failure(offset: start, reason: "a number must not start with 0")
        }
        while let digit = current, Self.isDigit(digit) { index += 1 }
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
        if whole, let integer = Int64(text) { return .integer(integer) }
        guard let decimal = Double(text), decimal.isFinite else {
            throw Failure(offset: start, reason: "the number \(text) is out of range")
        }
        return .decimal(decimal)
    }

    mutating func string() throws(Failure) -> String {
        let start = index
        index += 1
        var utf8: [UInt8] = []
        while let byte = current, byte != UInt8(ascii: "\"") {
            guard byte >= 0x20 else { throw failure("a control character must be escaped") }
            index += 1
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                continue
            }
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
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw failure("a low surrogate without a high one")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw failure("not a Unicode scalar") }
                utf8.append(contentsOf: String(unicode).utf8)
            default:
                throw failure("unknown escape")
            }
        }
        guard current == UInt8(ascii: "\"") else { throw Failure(offset: start, reason: "the string is not terminated") }
        index += 1
        // Validated here, not repaired: a string that is not UTF-8 is refused rather than changed.
        let malformed = transcode(utf8.makeIterator(), from: UTF8.self, to: UTF32.self, stoppingOnError: true) { _ in }
        guard !malformed else { throw Failure(offset: start, reason: "the string is not valid UTF-8") }
        return String(decoding: utf8, as: UTF8.self)
    }

    private mutating func hexQuad() throws(Failure) -> UInt16 {
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
