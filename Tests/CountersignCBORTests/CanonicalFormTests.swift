import CountersignCBOR
import Testing

/// CTAP2 canonical form, which authenticators must use for credential public keys.
@Suite struct CanonicalFormTests {
    static let x = [UInt8](hex: "65eda5a12577c2bae829437fe338701a10aaa375e1bb5b5de108de439c08551d")
    static let y = [UInt8](hex: "1e52ed75701163f7f9e40ddf9f341b3dc9ba860af7e0ca7ca7e9eecd0084d19c")

    /// An ES256 COSE key as the WebAuthn specification prints one (§6.5.1.1): kty 2, alg -7,
    /// crv 1, then x and y.
    static let coseKey = [UInt8](hex: "a5010203262001215820") + x + [0x22, 0x58, 0x20] + y

    @Test func theWebAuthnCOSEKeyIsCanonical() throws {
        let map = try #require(try CBORDecoder(options: .canonical).decode(Self.coseKey).map)
        #expect(map[int: 1] == CBORValue(2))
        #expect(map[int: 3]?.int == -7)
        #expect(map[int: -1]?.int == 1)
        #expect(map[int: -2]?.bytes == Self.x)
        #expect(map[int: -3]?.bytes == Self.y)
    }

    @Test func theCOSEKeyBuiltInAnyOrderEncodesToTheAuthenticatorsBytes() {
        let key = CBORMap([
            CBORValue(-3): .bytes(Self.y), CBORValue(-1): CBORValue(1), CBORValue(3): CBORValue(-7),
            CBORValue(-2): .bytes(Self.x), CBORValue(1): CBORValue(2),
        ])
        #expect(CBOREncoder.encode(.map(key)) == Self.coseKey)
    }

    @Test func aCOSEKeyPrefixReportsItsLengthBeforeTheExtensions() throws {
        let extensions = [UInt8](hex: "a16b6372656450726f74656374 02")
        let (value, length) = try CBORDecoder(options: .canonical).decodePrefix(Self.coseKey + extensions)
        #expect(length == 77)
        #expect(value.map?.count == 5)
    }

    static let nonMinimal: [Malformed] = [
        Malformed("1817", .nonMinimalEncoding(offset: 0), "23 in one extra byte"),
        Malformed("1900ff", .nonMinimalEncoding(offset: 0), "255 in two bytes"),
        Malformed("1a0000ffff", .nonMinimalEncoding(offset: 0), "65535 in four bytes"),
        Malformed("1b00000000ffffffff", .nonMinimalEncoding(offset: 0), "2^32-1 in eight bytes"),
        Malformed("3817", .nonMinimalEncoding(offset: 0), "-24 in one extra byte"),
        Malformed("5801aa", .nonMinimalEncoding(offset: 0), "byte string length"),
        Malformed("7800", .nonMinimalEncoding(offset: 0), "text string length"),
        Malformed("9800", .nonMinimalEncoding(offset: 0), "array length"),
        Malformed("b800", .nonMinimalEncoding(offset: 0), "map length"),
        Malformed("d80100", .nonMinimalEncoding(offset: 0), "tag number"),
        Malformed("fa3f800000", .nonMinimalEncoding(offset: 0), "1.0 as a single"),
        Malformed("fb3ff0000000000000", .nonMinimalEncoding(offset: 0), "1.0 as a double"),
        Malformed("fb47efffffe0000000", .nonMinimalEncoding(offset: 0), "largest single as a double"),
        Malformed("a1011900ff", .nonMinimalEncoding(offset: 2), "map value"),
    ]

    @Test(arguments: nonMinimal)
    func canonicalModeRefusesALongerEncodingThanNeeded(_ example: Malformed) {
        #expect(throws: example.error) { try CBORDecoder(options: .canonical).decode(example.bytes) }
    }

    @Test(arguments: nonMinimal)
    func defaultModeAcceptsALongerEncodingThanNeeded(_ example: Malformed) {
        #expect(throws: Never.self) { try CBORDecoder().decode(example.bytes) }
    }

    static let unsorted: [Malformed] = [
        Malformed("a203000100", .unsortedMapKeys(offset: 3), "3 before 1"),
        Malformed("a22000181800", .unsortedMapKeys(offset: 3), "-1 (major type 1) before 24 (major type 0)"),
        Malformed("a2626161006162 00", .unsortedMapKeys(offset: 5), "\"aa\" before the shorter \"b\""),
        Malformed("a2616200616100", .unsortedMapKeys(offset: 4), "\"b\" before \"a\""),
        Malformed("a26161000100", .unsortedMapKeys(offset: 4), "text before an integer"),
        Malformed("81a2020001 00", .unsortedMapKeys(offset: 4), "nested map"),
    ]

    @Test(arguments: unsorted)
    func canonicalModeRefusesKeysOutOfCTAP2Order(_ example: Malformed) {
        #expect(throws: example.error) { try CBORDecoder(options: .canonical).decode(example.bytes) }
    }

    @Test(arguments: unsorted)
    func defaultModeAcceptsKeysInAnyOrder(_ example: Malformed) {
        #expect(throws: Never.self) { try CBORDecoder().decode(example.bytes) }
    }

    /// RFC 7049's length-first order would put `-1` (one byte) before `24` (two bytes); CTAP2
    /// sorts by major type first.
    @Test func keysSortByMajorTypeBeforeLength() throws {
        #expect(throws: Never.self) { try CBORDecoder(options: .canonical).decode([UInt8](hex: "a21818002000")) }
    }

    @Test func shorterTextKeysSortFirst() throws {
        #expect(throws: Never.self) { try CBORDecoder(options: .canonical).decode([UInt8](hex: "a2616200626161 00")) }
    }

    static let duplicates: [Malformed] = [
        Malformed("a201000100", .duplicateMapKey(offset: 3), "integer key twice"),
        Malformed("a2616100616101", .duplicateMapKey(offset: 4), "text key twice"),
        Malformed("a2410100410102", .duplicateMapKey(offset: 4), "byte string key twice"),
        Malformed("81a201000100", .duplicateMapKey(offset: 4), "nested map"),
    ]

    @Test(arguments: duplicates)
    func duplicateKeysAreRefusedInBothModes(_ example: Malformed) {
        #expect(throws: example.error) { try CBORDecoder().decode(example.bytes) }
        #expect(throws: example.error) { try CBORDecoder(options: .canonical).decode(example.bytes) }
    }

    /// In canonical mode a key equal to an earlier, non-adjacent one is necessarily out of order.
    @Test func aRepeatOfANonAdjacentKeyIsADuplicateByDefaultAndUnsortedInCanonicalMode() {
        let bytes = [UInt8](hex: "a3010002000100")
        #expect(throws: CBORError.duplicateMapKey(offset: 5)) { try CBORDecoder().decode(bytes) }
        #expect(throws: CBORError.unsortedMapKeys(offset: 5)) { try CBORDecoder(options: .canonical).decode(bytes) }
    }

    @Test func keysThatDifferOnlyInEncodingAreDuplicates() {
        // 1.0 as a half and as a double, and 1 in one and in two bytes: equal values.
        #expect(throws: CBORError.duplicateMapKey(offset: 5)) {
            try CBORDecoder().decode([UInt8](hex: "a2f93c0000fb3ff000000000000001"))
        }
        #expect(throws: CBORError.duplicateMapKey(offset: 3)) { try CBORDecoder().decode([UInt8](hex: "a20100180100")) }
    }

    @Test func aDuplicateInAMapOfMoreThanSixteenEntriesIsFound() {
        var bytes: [UInt8] = [0xB8, 40]
        for key in 0..<39 { bytes += [0x18, UInt8(key + 24), 0xF6] }
        bytes += [0x18, 30, 0xF6]
        #expect(throws: CBORError.duplicateMapKey(offset: 2 + 39 * 3)) { try CBORDecoder().decode(bytes) }
        #expect(throws: CBORError.unsortedMapKeys(offset: 2 + 39 * 3)) {
            try CBORDecoder(options: .canonical).decode(bytes)
        }
    }

    /// Text keys compare by bytes: precomposed "é" and "e" + U+0301 are two keys on the wire,
    /// though Swift's `String` calls them equal.
    @Test func textKeysDifferingOnlyInNormalisationAreDistinct() throws {
        let map = try #require(try CBORDecoder().decode([UInt8](hex: "a262c3a9006365cc8101")).map)
        #expect(map.count == 2)
        #expect(map[text: "\u{E9}"] == .unsigned(0))
        #expect(map[text: "e\u{301}"] == .unsigned(1))
    }

    @Test func canonicalEncoderOutputIsAcceptedInCanonicalMode() throws {
        let value = CBORValue.map(CBORMap([
            .text("fmt"): .text("packed"), CBORValue(-1): .float(1.5), .bytes([1]): .array([CBORValue(-300)]),
            CBORValue(24): .tagged(1, .float(100_000)), .text("aa"): .null,
        ]))
        #expect(try CBORDecoder(options: .canonical).decode(CBOREncoder.encode(value)) == value)
    }
}
