/// One CBOR data item (RFC 8949), as the data model sees it rather than as the bytes spelt it:
/// `1` in one, two or eight bytes decodes to the same `.unsigned(1)`.
///
/// ```swift
/// let value = try CBORDecoder().decode([0xA1, 0x63, 0x66, 0x6D, 0x74, 0x64, 0x6E, 0x6F, 0x6E, 0x65])
/// value.map?[text: "fmt"]?.text // "none"
/// ```
///
/// Equality is the data model's, which differs from Swift's own in two places, so that equal
/// values always have equal canonical encodings:
/// - text compares by UTF-8 bytes, not by Unicode canonical equivalence (`"é"` precomposed and
///   `"e"` + U+0301 are different keys, as they are on the wire);
/// - floats compare by bit pattern, so `NaN` equals itself and `0.0` differs from `-0.0`.
public indirect enum CBORValue: Sendable {
    /// Major type 0.
    case unsigned(UInt64)
    /// Major type 1: the value is `-1 - n`, which reaches down to -2^64.
    case negative(UInt64)
    /// Major type 2.
    case bytes([UInt8])
    /// Major type 3; the decoder only produces well-formed UTF-8.
    case text(String)
    /// Major type 4.
    case array([CBORValue])
    /// Major type 5.
    case map(CBORMap)
    /// Major type 6: a tag number and the item it tags.
    case tagged(UInt64, CBORValue)
    /// Simple values 20 and 21.
    case bool(Bool)
    /// Simple value 22.
    case null
    /// Simple value 23.
    case undefined
    /// Any other simple value: 0...19 or 32...255. The decoder never produces 20...31; the
    /// encoder writes 20...23 as their one-byte forms and 24...31 in a two-byte form that
    /// decoders (this one included) refuse.
    case simple(UInt8)
    /// A half, single or double float; the decoder widens all three to `Double` exactly,
    /// NaN payloads included.
    case float(Double)
}

extension CBORValue {
    /// An integer as `.unsigned` or `.negative`, whichever the sign calls for.
    public init(_ int: Int64) {
        // For negative n, -1 - n is n's bitwise complement, which cannot overflow.
        self = int >= 0 ? .unsigned(UInt64(int)) : .negative(UInt64(~int))
    }

    /// The integer, if this is one that fits in `Int64` (COSE labels and algorithms do).
    public var int: Int64? {
        switch self {
        case .unsigned(let n) where n <= UInt64(Int64.max): Int64(n)
        case .negative(let n) where n <= UInt64(Int64.max): ~Int64(n)
        default: nil
        }
    }

    public var bytes: [UInt8]? {
        if case .bytes(let bytes) = self { bytes } else { nil }
    }

    public var text: String? {
        if case .text(let text) = self { text } else { nil }
    }

    public var array: [CBORValue]? {
        if case .array(let array) = self { array } else { nil }
    }

    public var map: CBORMap? {
        if case .map(let map) = self { map } else { nil }
    }
}

extension CBORValue: Hashable {
    public static func == (lhs: CBORValue, rhs: CBORValue) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)): a == b
        case (.negative(let a), .negative(let b)): a == b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.text(let a), .text(let b)): a.utf8.elementsEqual(b.utf8)
        case (.array(let a), .array(let b)): a == b
        case (.map(let a), .map(let b)): a == b
        case (.tagged(let tagA, let a), .tagged(let tagB, let b)): tagA == tagB && a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null), (.undefined, .undefined): true
        case (.simple(let a), .simple(let b)): a == b
        case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .unsigned(let n): hasher.combine(0 as UInt8); hasher.combine(n)
        case .negative(let n): hasher.combine(1 as UInt8); hasher.combine(n)
        case .bytes(let bytes): hasher.combine(2 as UInt8); hasher.combine(bytes)
        case .text(let text):
            hasher.combine(3 as UInt8)
            hasher.combine(text.utf8.count)
            for byte in text.utf8 { hasher.combine(byte) }
        case .array(let array): hasher.combine(4 as UInt8); hasher.combine(array)
        case .map(let map): hasher.combine(5 as UInt8); hasher.combine(map)
        case .tagged(let tag, let value): hasher.combine(6 as UInt8); hasher.combine(tag); hasher.combine(value)
        case .bool(let bool): hasher.combine(7 as UInt8); hasher.combine(bool)
        case .null: hasher.combine(8 as UInt8)
        case .undefined: hasher.combine(9 as UInt8)
        case .simple(let n): hasher.combine(10 as UInt8); hasher.combine(n)
        case .float(let double): hasher.combine(11 as UInt8); hasher.combine(double.bitPattern)
        }
    }
}
