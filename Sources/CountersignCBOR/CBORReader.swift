/// Reads CBOR items off one contiguous buffer, byte by byte.
///
/// Every length and count is checked against the bytes that remain before anything is
/// allocated for it, so a head claiming 2^60 bytes fails at once instead of asking for memory.
/// Recursion is bounded by `Options.maximumDepth`.
struct CBORReader {
    private let input: UnsafeBufferPointer<UInt8>
    /// Where reading stops: the input's end, or `maximumInputLength` if that comes first.
    private let limit: Int
    private let maximumDepth: Int
    private let requireCanonical: Bool
    /// The offset of the next unread byte.
    private(set) var position = 0

    /// Maps up to this size are checked for duplicate keys pairwise; larger ones through a set.
    private static let pairwiseDuplicateCheckLimit = 16

    init(_ input: UnsafeBufferPointer<UInt8>, options: CBORDecoder.Options) {
        self.input = input
        limit = min(input.count, max(options.maximumInputLength, 0))
        maximumDepth = options.maximumDepth
        requireCanonical = options.requireCanonical
    }

    /// Reads one complete item starting at `position`; `depth` counts the enclosing arrays,
    /// maps and tags.
    mutating func readItem(depth: Int) throws(CBORError) -> CBORValue {
        let start = position
        guard position < limit else { throw shortage(at: start) }
        let initial = input[position]
        position += 1
        let info = initial & 0x1F
        switch initial >> 5 {
        case 0:
            return .unsigned(try readArgument(info, start: start))
        case 1:
            return .negative(try readArgument(info, start: start))
        case 2:
            return .bytes(Array(try readContent(length: readArgument(info, start: start), start: start)))
        case 3:
            let content = try readContent(length: readArgument(info, start: start), start: start)
            guard let text = String(validUTF8: content) else { throw .invalidUTF8(offset: start) }
            return .text(text)
        case 4:
            return .array(try readArray(count: readArgument(info, start: start), start: start, depth: depth))
        case 5:
            return .map(try readMap(count: readArgument(info, start: start), start: start, depth: depth))
        case 6:
            let tag = try readArgument(info, start: start)
            guard depth < maximumDepth else { throw .depthLimitExceeded(offset: start) }
            return .tagged(tag, try readItem(depth: depth + 1))
        default:
            return try readSimpleOrFloat(info, start: start)
        }
    }

    /// The error for the item at `start` needing bytes past `limit`: the input is cut short, or
    /// the item runs past `maximumInputLength`.
    private func shortage(at start: Int) -> CBORError {
        limit < input.count ? .lengthLimitExceeded(offset: start) : .truncated(offset: start)
    }

    /// Reads `count` bytes (1...8) as a big-endian unsigned integer.
    private mutating func readBigEndian(_ count: Int, start: Int) throws(CBORError) -> UInt64 {
        guard count <= limit - position else { throw shortage(at: start) }
        var value: UInt64 = 0
        for offset in position..<position + count {
            value = value << 8 | UInt64(input[offset])
        }
        position += count
        return value
    }

    /// The argument of a head in major types 0...6: its value, length or count.
    private mutating func readArgument(_ info: UInt8, start: Int) throws(CBORError) -> UInt64 {
        let value: UInt64
        let shortestBelow: UInt64
        switch info {
        case 0..<24: return UInt64(info)
        case 24: (value, shortestBelow) = (try readBigEndian(1, start: start), 24)
        case 25: (value, shortestBelow) = (try readBigEndian(2, start: start), 0x100)
        case 26: (value, shortestBelow) = (try readBigEndian(4, start: start), 0x1_0000)
        case 27: (value, shortestBelow) = (try readBigEndian(8, start: start), 0x1_0000_0000)
        case 28...30: throw .reservedAdditionalInfo(offset: start)
        default: throw .indefiniteLength(offset: start)
        }
        if requireCanonical && value < shortestBelow { throw .nonMinimalEncoding(offset: start) }
        return value
    }

    /// The content bytes of a byte or text string, once `length` is known to fit.
    private mutating func readContent(length: UInt64, start: Int) throws(CBORError) -> UnsafeBufferPointer<UInt8> {
        guard length <= UInt64(limit - position) else { throw .lengthLimitExceeded(offset: start) }
        let end = position + Int(length)
        defer { position = end }
        return UnsafeBufferPointer(rebasing: input[position..<end])
    }

    private mutating func readArray(count: UInt64, start: Int, depth: Int) throws(CBORError) -> [CBORValue] {
        guard depth < maximumDepth else { throw .depthLimitExceeded(offset: start) }
        // Every element takes at least one byte.
        guard count <= UInt64(limit - position) else { throw .lengthLimitExceeded(offset: start) }
        var elements: [CBORValue] = []
        elements.reserveCapacity(Int(count))
        for _ in 0..<count {
            elements.append(try readItem(depth: depth + 1))
        }
        return elements
    }

    private mutating func readMap(count: UInt64, start: Int, depth: Int) throws(CBORError) -> CBORMap {
        guard depth < maximumDepth else { throw .depthLimitExceeded(offset: start) }
        // Every key and every value takes at least one byte.
        guard count <= UInt64((limit - position) / 2) else { throw .lengthLimitExceeded(offset: start) }
        var entries: [CBORMap.Entry] = []
        entries.reserveCapacity(Int(count))
        var previousKey: Range<Int>?
        var seenKeys: Set<CBORValue> = []
        let checksPairwise = count <= Self.pairwiseDuplicateCheckLimit
        for _ in 0..<count {
            let keyStart = position
            let key = try readItem(depth: depth + 1)
            if requireCanonical {
                // Canonical encodings are unique, so sorted-and-distinct bytes mean distinct keys.
                let keyBytes = keyStart..<position
                if let previousKey {
                    let order = CanonicalKeyOrder.compare(
                        UnsafeBufferPointer(rebasing: input[previousKey]), UnsafeBufferPointer(rebasing: input[keyBytes]))
                    if order == 0 { throw .duplicateMapKey(offset: keyStart) }
                    if order > 0 { throw .unsortedMapKeys(offset: keyStart) }
                }
                previousKey = keyBytes
            } else if checksPairwise {
                if entries.contains(where: { $0.key == key }) { throw .duplicateMapKey(offset: keyStart) }
            } else {
                if !seenKeys.insert(key).inserted { throw .duplicateMapKey(offset: keyStart) }
            }
            entries.append(CBORMap.Entry(key: key, value: try readItem(depth: depth + 1)))
        }
        return CBORMap(entries)
    }

    /// Major type 7: simple values, and floats of the three widths.
    private mutating func readSimpleOrFloat(_ info: UInt8, start: Int) throws(CBORError) -> CBORValue {
        let float: FloatWidth
        switch info {
        case 0..<20: return .simple(info)
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 24:
            let value = try readBigEndian(1, start: start)
            // 0...31 have (or are reserved for) the one-byte form; a second spelling is refused.
            guard value >= 32 else { throw .invalidSimpleValue(offset: start) }
            return .simple(UInt8(value))
        case 25: float = .half(UInt16(try readBigEndian(2, start: start)))
        case 26: float = .single(UInt32(try readBigEndian(4, start: start)))
        case 27: float = .double(try readBigEndian(8, start: start))
        case 28...30: throw .reservedAdditionalInfo(offset: start)
        default: throw .invalidSimpleValue(offset: start)
        }
        let value = float.double
        if requireCanonical && FloatWidth(shortestFor: value).byteCount < float.byteCount {
            throw .nonMinimalEncoding(offset: start)
        }
        return .float(value)
    }
}
