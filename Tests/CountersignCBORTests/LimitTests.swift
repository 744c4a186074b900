import CountersignCBOR
import Testing

/// Depth and length limits, which keep hostile input from costing stack or memory.
@Suite struct LimitTests {
    static func nestedArrays(_ depth: Int) -> [UInt8] {
        Array(repeating: 0x81, count: depth - 1) + [0x80]
    }

    @Test func sixteenNestedArraysAreWithinTheDefaultDepth() throws {
        #expect(throws: Never.self) { try CBORDecoder().decode(Self.nestedArrays(16)) }
    }

    @Test func theSeventeenthNestedArrayExceedsTheDefaultDepth() {
        #expect(throws: CBORError.depthLimitExceeded(offset: 16)) { try CBORDecoder().decode(Self.nestedArrays(17)) }
    }

    @Test func tagsAndMapsCountTowardsDepth() {
        let bytes: [UInt8] = Array(repeating: 0xC0, count: 2) + [0xA1, 0x00, 0x81, 0x00]
        #expect(throws: Never.self) { try CBORDecoder(options: .init(maximumDepth: 4)).decode(bytes) }
        #expect(throws: CBORError.depthLimitExceeded(offset: 4)) {
            try CBORDecoder(options: .init(maximumDepth: 3)).decode(bytes)
        }
    }

    @Test func depthZeroAllowsOnlyScalars() throws {
        let decoder = CBORDecoder(options: .init(maximumDepth: 0))
        #expect(try decoder.decode([0x01]) == .unsigned(1))
        #expect(throws: CBORError.depthLimitExceeded(offset: 0)) { try decoder.decode([0x80]) }
    }

    @Test func aDeepInputFailsWithoutExhaustingTheStack() {
        #expect(throws: CBORError.depthLimitExceeded(offset: 16)) {
            try CBORDecoder().decode(Array(repeating: 0x81, count: 60_000) + [0x00])
        }
    }

    static let hugeClaims: [Malformed] = [
        Malformed("5b1000000000000000", .lengthLimitExceeded(offset: 0), "byte string of 2^60 bytes"),
        Malformed("7bffffffffffffffff", .lengthLimitExceeded(offset: 0), "text string of 2^64-1 bytes"),
        Malformed("9b1000000000000000", .lengthLimitExceeded(offset: 0), "array of 2^60 elements"),
        Malformed("bbffffffffffffffff", .lengthLimitExceeded(offset: 0), "map of 2^64-1 entries"),
        Malformed("bb8000000000000000", .lengthLimitExceeded(offset: 0), "map whose doubled count overflows"),
        Malformed("4301", .lengthLimitExceeded(offset: 0), "byte string longer than the rest"),
        Malformed("8143aabb", .lengthLimitExceeded(offset: 1), "nested string longer than the rest"),
        Malformed("830102", .lengthLimitExceeded(offset: 0), "array with more elements than bytes"),
        Malformed("a2010203", .lengthLimitExceeded(offset: 0), "map with more entries than byte pairs"),
    ]

    @Test(arguments: hugeClaims)
    func aClaimBeyondTheRemainingBytesFailsBeforeAllocating(_ example: Malformed) {
        #expect(throws: example.error) { try CBORDecoder().decode(example.bytes) }
    }

    @Test func inputLongerThanTheLimitIsRefusedUpFront() {
        let decoder = CBORDecoder(options: .init(maximumInputLength: 8))
        #expect(throws: CBORError.lengthLimitExceeded(offset: 0)) { try decoder.decode([UInt8](hex: "4800000000000000ff")) }
        #expect(throws: Never.self) { try decoder.decode([UInt8](hex: "4700000000000000")) }
    }

    @Test func aPrefixMayNotRunPastTheLimit() throws {
        let decoder = CBORDecoder(options: .init(maximumInputLength: 2))
        #expect(try decoder.decodePrefix([0x41, 0xAA, 0x01, 0x02]) == (.bytes([0xAA]), 2))
        #expect(throws: CBORError.lengthLimitExceeded(offset: 0)) { try decoder.decodePrefix([0x43, 1, 2, 3]) }
        #expect(throws: CBORError.lengthLimitExceeded(offset: 0)) { try decoder.decodePrefix([0x19, 0x01, 0x00]) }
    }

    @Test func theDefaultLimitIs64KiB() throws {
        let largest = [0x59, 0xFF, 0xFD] + [UInt8](repeating: 7, count: 65_533)
        #expect(try CBORDecoder().decode(largest).bytes?.count == 65_533)
        #expect(throws: CBORError.lengthLimitExceeded(offset: 0)) { try CBORDecoder().decode(largest + [0]) }
    }
}
