import CountersignCBOR
import Testing

/// The data model: integer conversions, accessors, and equality that matches the wire.
@Suite struct CBORValueTests {
    @Test(arguments: [Int64.min, -25, -1, 0, 1, 24, Int64.max])
    func int64RoundTripsThroughCBORValue(_ int: Int64) {
        #expect(CBORValue(int).int == int)
    }

    @Test func negativeIntegersAreMinusOneMinusN() {
        #expect(CBORValue(-1) == .negative(0))
        #expect(CBORValue(-7) == .negative(6))
        #expect(CBORValue(.min) == .negative(UInt64(Int64.max)))
    }

    @Test func integersBeyondInt64HaveNoInt() {
        #expect(CBORValue.unsigned(UInt64(Int64.max) + 1).int == nil)
        #expect(CBORValue.negative(UInt64(Int64.max) + 1).int == nil)
        #expect(CBORValue.text("1").int == nil)
    }

    @Test func accessorsAnswerOnlyForTheirOwnCase() {
        #expect(CBORValue.bytes([1]).bytes == [1])
        #expect(CBORValue.text("a").bytes == nil)
        #expect(CBORValue.text("a").text == "a")
        #expect(CBORValue.array([.null]).array == [.null])
        #expect(CBORValue.map(CBORMap()).map == CBORMap())
        #expect(CBORValue.array([]).map == nil)
    }

    @Test func floatsCompareByBitPattern() {
        #expect(CBORValue.float(.nan) == .float(.nan))
        #expect(CBORValue.float(0.0) != .float(-0.0))
        #expect(CBORValue.float(1) != .unsigned(1))
    }

    @Test func textComparesByUTF8Bytes() {
        #expect(CBORValue.text("\u{E9}") != .text("e\u{301}"))
        #expect(Set([CBORValue.text("\u{E9}"), .text("e\u{301}")]).count == 2)
    }

    @Test func mapsAreEqualWhateverTheirEntryOrder() {
        let sorted = CBORMap([CBORValue(1): .text("a"), CBORValue(2): .text("b")])
        let reversed = CBORMap([CBORValue(2): .text("b"), CBORValue(1): .text("a")])
        #expect(sorted == reversed)
        #expect(sorted.hashValue == reversed.hashValue)
        #expect(sorted != CBORMap([CBORValue(1): .text("a"), CBORValue(2): .text("c")]))
    }

    @Test func largeMapsAreEqualWhateverTheirEntryOrder() {
        let entries = (0..<40).map { CBORMap.Entry(key: CBORValue(Int64($0)), value: .unsigned(UInt64($0))) }
        #expect(CBORMap(entries) == CBORMap(entries.reversed()))
        #expect(CBORMap(entries).hashValue == CBORMap(entries.reversed()).hashValue)
        var changed = entries
        changed[7].value = .null
        #expect(CBORMap(entries) != CBORMap(changed.reversed()))
    }

    @Test func mapSubscriptsFindTextAndIntegerKeys() {
        let map = CBORMap([.text("fmt"): .text("none"), CBORValue(-1): CBORValue(1), .bytes([]): .null])
        #expect(map[text: "fmt"] == .text("none"))
        #expect(map[int: -1] == CBORValue(1))
        #expect(map[.bytes([])] == .null)
        #expect(map[text: "attStmt"] == nil)
        #expect(map.count == 3)
    }
}
