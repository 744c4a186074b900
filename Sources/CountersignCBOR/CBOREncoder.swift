/// Writes CBOR in CTAP2 canonical form.
///
/// Canonical because what Countersign encodes is compared and signed as bytes: a COSE key
/// re-encoded here must match the authenticator's own bytes, and one value has one encoding.
///
/// ```swift
/// let bytes = CBOREncoder.encode(.map(CBORMap([.text("fmt"): .text("none")])))
/// // A1 63 66 6D 74 64 6E 6F 6E 65
/// ```
public enum CBOREncoder {
    /// CTAP2 canonical encoding: shortest forms, map keys sorted (major type, then encoded length,
    /// then bytewise); floats as the shortest of half/single/double that keeps the value exactly.
    ///
    /// Writes what it is given: a hand-built map with two equal keys is written with both, and
    /// `.simple(24...31)` in a two-byte form; decoders refuse either.
    public static func encode(_ value: CBORValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        write(value, into: &output)
        return output
    }

    private static func write(_ value: CBORValue, into output: inout [UInt8]) {
        switch value {
        case .unsigned(let n):
            writeHead(major: 0, argument: n, into: &output)
        case .negative(let n):
            writeHead(major: 1, argument: n, into: &output)
        case .bytes(let bytes):
            writeHead(major: 2, argument: UInt64(bytes.count), into: &output)
            output.append(contentsOf: bytes)
        case .text(let text):
            writeHead(major: 3, argument: UInt64(text.utf8.count), into: &output)
            output.append(contentsOf: text.utf8)
        case .array(let elements):
            writeHead(major: 4, argument: UInt64(elements.count), into: &output)
            for element in elements { write(element, into: &output) }
        case .map(let map):
            writeHead(major: 5, argument: UInt64(map.count), into: &output)
            writeSortedEntries(of: map, into: &output)
        case .tagged(let tag, let tagged):
            writeHead(major: 6, argument: tag, into: &output)
            write(tagged, into: &output)
        case .bool(let bool):
            output.append(bool ? 0xF5 : 0xF4)
        case .null:
            output.append(0xF6)
        case .undefined:
            output.append(0xF7)
        case .simple(let n):
            if n < 24 { output.append(0xE0 | n) } else { output.append(contentsOf: [0xF8, n]) }
        case .float(let double):
            switch FloatWidth(shortestFor: double) {
            case .half(let bits): writeBigEndian(UInt64(bits), byteCount: 2, after: 0xF9, into: &output)
            case .single(let bits): writeBigEndian(UInt64(bits), byteCount: 4, after: 0xFA, into: &output)
            case .double(let bits): writeBigEndian(bits, byteCount: 8, after: 0xFB, into: &output)
            }
        }
    }

    /// Map entries in CTAP2 key order, which is defined on the encoded keys, so each key is
    /// encoded first and the entries sorted by those bytes.
    private static func writeSortedEntries(of map: CBORMap, into output: inout [UInt8]) {
        let keyed = map.entries.map { (key: encode($0.key), value: $0.value) }
        let sorted = keyed.sorted { a, b in
            a.key.withUnsafeBufferPointer { a in
                b.key.withUnsafeBufferPointer { b in CanonicalKeyOrder.precedes(a, b) }
            }
        }
        for entry in sorted {
            output.append(contentsOf: entry.key)
            write(entry.value, into: &output)
        }
    }

    /// The shortest head for `argument`: in the initial byte below 24, else in 1, 2, 4 or 8 bytes.
    private static func writeHead(major: UInt8, argument: UInt64, into output: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24: output.append(type | UInt8(argument))
        case 24...0xFF: writeBigEndian(argument, byteCount: 1, after: type | 24, into: &output)
        case 0x100...0xFFFF: writeBigEndian(argument, byteCount: 2, after: type | 25, into: &output)
        case 0x1_0000...0xFFFF_FFFF: writeBigEndian(argument, byteCount: 4, after: type | 26, into: &output)
        default: writeBigEndian(argument, byteCount: 8, after: type | 27, into: &output)
        }
    }

    private static func writeBigEndian(_ value: UInt64, byteCount: Int, after initial: UInt8, into output: inout [UInt8]) {
        output.append(initial)
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) {
            output.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
