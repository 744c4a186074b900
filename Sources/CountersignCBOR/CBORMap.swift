/// A CBOR map (major type 5): its entries in the order they came off the wire.
///
/// Equality and hashing ignore order, as RFC 8949 §5.6 treats maps as unordered: a map decoded
/// from unsorted bytes equals the same map re-encoded in canonical order. Lookups scan the
/// entries; the maps WebAuthn carries (COSE keys, attestation objects) hold a handful.
///
/// ```swift
/// let key = CBORMap([CBORValue(1): CBORValue(2), CBORValue(3): CBORValue(-7)])
/// key[int: 3]?.int // -7
/// ```
public struct CBORMap: Sendable {
    /// One key and its value.
    public struct Entry: Sendable, Hashable {
        public var key: CBORValue
        public var value: CBORValue

        public init(key: CBORValue, value: CBORValue) {
            self.key = key
            self.value = value
        }
    }

    /// The entries in wire order. The decoder never produces two equal keys; a map built by hand
    /// should not hold them either, since the encoder writes what it is given.
    public var entries: [Entry]

    public init(_ entries: [Entry] = []) {
        self.entries = entries
    }

    public init(_ pairs: KeyValuePairs<CBORValue, CBORValue>) {
        entries = pairs.map { Entry(key: $0.key, value: $0.value) }
    }

    /// The value of the first entry whose key equals `key`.
    public subscript(key: CBORValue) -> CBORValue? {
        entries.first { $0.key == key }?.value
    }

    /// The value under a text key, such as `fmt` or `attStmt` in an attestation object.
    public subscript(text key: String) -> CBORValue? {
        self[.text(key)]
    }

    /// The value under an integer key, such as a COSE key label (`1` kty, `3` alg, `-1` crv).
    public subscript(int key: Int64) -> CBORValue? {
        self[CBORValue(key)]
    }

    public var count: Int { entries.count }
}

extension CBORMap: Hashable {
    /// Whether both maps hold the same entries, in any order. Counted as multisets, so that a
    /// hand-built map with a repeated entry still hashes consistently with `==`.
    public static func == (lhs: CBORMap, rhs: CBORMap) -> Bool {
        guard lhs.entries.count == rhs.entries.count else { return false }
        // Same wire order is the common case (a canonical map compared with itself re-decoded).
        if lhs.entries == rhs.entries { return true }
        if lhs.entries.count <= 16 {
            return lhs.entries.allSatisfy { entry in
                lhs.entries.lazy.filter { $0 == entry }.count == rhs.entries.lazy.filter { $0 == entry }.count
            }
        }
        // Large maps are tallied, so comparing two of them stays linear: map keys may themselves
        // be maps, and quadratic comparison there would let a small input cost a lot.
        var tally = [Entry: Int](minimumCapacity: lhs.entries.count)
        for entry in lhs.entries { tally[entry, default: 0] += 1 }
        for entry in rhs.entries {
            guard let remaining = tally[entry], remaining > 0 else { return false }
            tally[entry] = remaining - 1
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent, to agree with `==`: each entry's own hash, summed.
        var sum = 0
        for entry in entries {
            var entryHasher = Hasher()
            entryHasher.combine(entry)
            sum &+= entryHasher.finalize()
        }
        hasher.combine(entries.count)
        hasher.combine(sum)
    }
}
