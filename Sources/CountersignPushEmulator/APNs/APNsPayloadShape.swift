import Foundation

/// Whether a notification body is a JSON object with an `aps` member that is an object.
///
/// A single pass over the bytes that checks JSON's grammar without building any value: it
/// runs on every request of the benchmark, where decoding each payload into dictionaries
/// would cost more than everything else the emulator does. Number and string contents are
/// checked for form only (UTF-8 validity is not), which is all the question needs.
enum APNsPayloadShape {
    static func hasAPSObject(_ body: Data) -> Bool {
        body.withUnsafeBytes { bytes in
            var scanner = JSONScanner(bytes: bytes)
            return scanner.topLevelObjectHasAPSObject()
        }
    }
}

private struct JSONScanner {
    /// Deeper than any notification payload; it bounds the recursion.
    static let maximumDepth = 32
    static let aps = Array("aps".utf8)

    let bytes: UnsafeRawBufferPointer
    var index = 0

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func topLevelObjectHasAPSObject() -> Bool {
        skipSpace()
        guard current == UInt8(ascii: "{") else { return false }
        index += 1
        skipSpace()
        var found = false
        if current == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                guard let name = string() else { return false }
                skipSpace()
                guard current == UInt8(ascii: ":") else { return false }
                index += 1
                skipSpace()
                if current == UInt8(ascii: "{"), name.elementsEqual(Self.aps) { found = true }
                guard value(depth: 1) else { return false }
                skipSpace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    skipSpace()
                } else if current == UInt8(ascii: "}") {
                    index += 1
                    break
                } else {
                    return false
                }
            }
        }
        skipSpace()
        return found && index == bytes.count
    }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func value(depth: Int) -> Bool {
        guard depth <= Self.maximumDepth, let byte = current else { return false }
        switch byte {
        case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), named: true, depth: depth)
        case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), named: false, depth: depth)
        case UInt8(ascii: "\""): return string() != nil
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number()
        }
    }

    /// An object (`named`) or an array, from its opening bracket to `close`.
    private mutating func container(close: UInt8, named: Bool, depth: Int) -> Bool {
        index += 1
        skipSpace()
        if current == close {
            index += 1
            return true
        }
        while true {
            if named {
                guard string() != nil else { return false }
                skipSpace()
                guard current == UInt8(ascii: ":") else { return false }
                index += 1
                skipSpace()
            }
            guard value(depth: depth + 1) else { return false }
            skipSpace()
            if current == UInt8(ascii: ",") {
                index += 1
                skipSpace()
            } else if current == close {
                index += 1
                return true
            } else {
                return false
            }
        }
    }

    /// A string; returns its raw bytes between the quotes (escapes not decoded).
    private mutating func string() -> UnsafeRawBufferPointer.SubSequence? {
        guard current == UInt8(ascii: "\"") else { return nil }
        index += 1
        let start = index
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return bytes[start..<index - 1]
            case UInt8(ascii: "\\"):
                index += 1
                guard let escaped = current else { return nil }
                if escaped == UInt8(ascii: "u") {
                    guard index + 4 < bytes.count,
                          bytes[index + 1...index + 4].allSatisfy({ $0.isHexDigit }) else { return nil }
                    index += 5
                } else {
                    guard "\"\\/bfnrt".utf8.contains(escaped) else { return nil }
                    index += 1
                }
            case 0..<0x20:
                return nil
            default:
                index += 1
            }
        }
        return nil
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    private mutating func number() -> Bool {
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits() else { return false }
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits() else { return false }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits() else { return false }
        }
        return true
    }

    /// One or more decimal digits.
    private mutating func digits() -> Bool {
        let start = index
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
        return index > start
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
