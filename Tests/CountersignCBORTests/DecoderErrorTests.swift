import CountersignCBOR
import Testing

/// Each way an input can fail to be one well-formed item, with the offset of the item at fault.
@Suite struct DecoderErrorTests {
    static let truncated: [Malformed] = [
        Malformed("", .truncated(offset: 0), "empty input"),
        Malformed("18", .truncated(offset: 0), "one-byte argument missing"),
        Malformed("1901", .truncated(offset: 0), "two-byte argument cut short"),
        Malformed("1a000000", .truncated(offset: 0), "four-byte argument cut short"),
        Malformed("1b00000000000000", .truncated(offset: 0), "eight-byte argument cut short"),
        Malformed("f900", .truncated(offset: 0), "half float cut short"),
        Malformed("fb3ff0", .truncated(offset: 0), "double cut short"),
        Malformed("f8", .truncated(offset: 0), "two-byte simple value cut short"),
        Malformed("c0", .truncated(offset: 1), "tag without its item"),
        Malformed("824100", .truncated(offset: 3), "array's second element missing"),
        Malformed("811901", .truncated(offset: 1), "element's head cut short"),
        Malformed("a1190100", .truncated(offset: 4), "map value missing"),
    ]

    @Test(arguments: truncated)
    func inputEndingInsideAnItemIsTruncated(_ example: Malformed) {
        #expect(throws: example.error) { try CBORDecoder().decode(example.bytes) }
    }

    static let reserved: [Malformed] = [
        Malformed("1c", .reservedAdditionalInfo(offset: 0), "unsigned, 28"),
        Malformed("1d", .reservedAdditionalInfo(offset: 0), "unsigned, 29"),
        Malformed("1e", .reservedAdditionalInfo(offset: 0), "unsigned, 30"),
        Malformed("3c", .reservedAdditionalInfo(offset: 0), "negative"),
        Malformed("5d", .reservedAdditionalInfo(offset: 0), "byte string"),
        Malformed("7e", .reservedAdditionalInfo(offset: 0), "text string"),
        Malformed("9c", .reservedAdditionalInfo(offset: 0), "array"),
        Malformed("bd", .reservedAdditionalInfo(offset: 0), "map"),
        Malformed("de", .reservedAdditionalInfo(offset: 0), "tag"),
        Malformed("fc", .reservedAdditionalInfo(offset: 0), "simple, 28"),
        Malformed("fe", .reservedAdditionalInfo(offset: 0), "simple, 30"),
        Malformed("82001c", .reservedAdditionalInfo(offset: 2), "inside an array"),
    ]

    @Test(arguments: reserved)
    func reservedAdditionalInformationIsRefused(_ example: Malformed) {
        #expect(throws: example.error) { try CBORDecoder().decode(example.bytes) }
    }

    static let indefinite: [Malformed] = [
        Malformed("1f", .indefiniteLength(offset: 0), "unsigned"),
        Malformed("3f", .indefiniteLength(offset: 0), "negative"),
        Malformed("5f", .indefiniteLength(offset: 0), "byte string"),
        Malformed("7f", .indefiniteLength(offset: 0), "text string"),
        Malformed("9f", .indefiniteLength(offset: 0), "array"),
        Malformed("bf", .indefiniteLength(offset: 0), "map"),
        Malformed("df", .indefiniteLength(offset: 0), "tag"),
        Malformed("a1015fff", .indefiniteLength(offset: 2), "map value"),
    ]

    @Test(arguments: indefinite)
    func additionalInformation31IsRefusedOutsideMajorType7(_ example: Malformed) {
        #expect(throws: example.error) { try CBORDecoder().decode(example.bytes) }
    }

    static let simpleValues: [Malformed] = [
        Malformed("ff", .invalidSimpleValue(offset: 0), "lone break"),
        Malformed("8201ff", .invalidSimpleValue(offset: 2), "break where a definite array needs an element"),
        Malformed("f800", .invalidSimpleValue(offset: 0), "simple 0 in two bytes"),
        Malformed("f813", .invalidSimpleValue(offset: 0), "simple 19 in two bytes"),
        Malformed("f814", .invalidSimpleValue(offset: 0), "false in two bytes"),
        Malformed("f817", .invalidSimpleValue(offset: 0), "undefined in two bytes"),
        Malformed("f81f", .invalidSimpleValue(offset: 0), "reserved 31"),
    ]

    @Test(arguments: simpleValues)
    func simpleValueBelow32InTwoBytesOrABreakIsRefused(_ example: Malformed) {
        #expect(throws: example.error) { try CBORDecoder().decode(example.bytes) }
    }

    @Test func simpleValue32IsTheFirstOfTheTwoByteForm() throws {
        #expect(try CBORDecoder().decode([0xF8, 0x20]) == .simple(32))
    }

    static let utf8: [Malformed] = [
        Malformed("61ff", .invalidUTF8(offset: 0), "byte never in UTF-8"),
        Malformed("6180", .invalidUTF8(offset: 0), "lone continuation byte"),
        Malformed("62c080", .invalidUTF8(offset: 0), "overlong NUL"),
        Malformed("63e08080", .invalidUTF8(offset: 0), "overlong three-byte NUL"),
        Malformed("63eda080", .invalidUTF8(offset: 0), "UTF-16 surrogate"),
        Malformed("64f4908080", .invalidUTF8(offset: 0), "beyond U+10FFFF"),
        Malformed("62e6b0", .invalidUTF8(offset: 0), "sequence cut by the string's end"),
        Malformed("820061ff", .invalidUTF8(offset: 2), "inside an array"),
        Malformed("a161ff00", .invalidUTF8(offset: 1), "map key"),
    ]

    @Test(arguments: utf8)
    func textThatIsNotUTF8IsRefused(_ example: Malformed) {
        #expect(throws: example.error) { try CBORDecoder().decode(example.bytes) }
    }

    static let trailing: [Malformed] = [
        Malformed("0000", .trailingBytes(offset: 1), "two integers"),
        Malformed("8000", .trailingBytes(offset: 1), "array then integer"),
        Malformed("a0ff", .trailingBytes(offset: 1), "map then break"),
    ]

    @Test(arguments: trailing)
    func bytesAfterTheItemAreTrailing(_ example: Malformed) {
        #expect(throws: example.error) { try CBORDecoder().decode(example.bytes) }
    }

    @Test func everyErrorExposesItsOffset() {
        #expect(CBORError.invalidUTF8(offset: 7).offset == 7)
        #expect(CBORError.trailingBytes(offset: 3).offset == 3)
    }

    @Test func decodePrefixLeavesTrailingBytesToTheCaller() throws {
        let (value, length) = try CBORDecoder().decodePrefix([UInt8](hex: "820102a0ff"))
        #expect(value == .array([.unsigned(1), .unsigned(2)]))
        #expect(length == 3)
    }

    @Test func offsetsCountFromTheFirstByteOfASlice() {
        let bytes = [UInt8](hex: "ffffff820061ff")
        #expect(throws: CBORError.invalidUTF8(offset: 2)) { try CBORDecoder().decode(bytes[3...]) }
    }

    @Test func nonContiguousInputDecodesLikeAnArray() throws {
        let reversed = [UInt8](hex: "0201820282")
        #expect(try CBORDecoder().decode(reversed.reversed()) == .array([.unsigned(2), .array([.unsigned(1), .unsigned(2)])]))
    }
}
