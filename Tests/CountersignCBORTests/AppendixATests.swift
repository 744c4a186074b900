import CountersignCBOR
import Testing

/// The examples of RFC 8949 Appendix A, Table 6 (and the indefinite-length examples that follow
/// it), as this decoder must read them.
@Suite struct AppendixATests {
    /// Examples in preferred serialization: decoded in canonical mode, re-encoded byte for byte.
    static let canonicalExamples: [(String, CBORValue)] = [
        ("00", .unsigned(0)),
        ("01", .unsigned(1)),
        ("0a", .unsigned(10)),
        ("17", .unsigned(23)),
        ("1818", .unsigned(24)),
        ("1819", .unsigned(25)),
        ("1864", .unsigned(100)),
        ("1903e8", .unsigned(1000)),
        ("1a000f4240", .unsigned(1_000_000)),
        ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)),
        ("1bffffffffffffffff", .unsigned(18_446_744_073_709_551_615)),
        ("c249010000000000000000", .tagged(2, .bytes([1, 0, 0, 0, 0, 0, 0, 0, 0]))),
        ("3bffffffffffffffff", .negative(18_446_744_073_709_551_615)),
        ("c349010000000000000000", .tagged(3, .bytes([1, 0, 0, 0, 0, 0, 0, 0, 0]))),
        ("20", CBORValue(-1)),
        ("29", CBORValue(-10)),
        ("3863", CBORValue(-100)),
        ("3903e7", CBORValue(-1000)),
        ("f90000", .float(0.0)),
        ("f98000", .float(-0.0)),
        ("f93c00", .float(1.0)),
        ("fb3ff199999999999a", .float(1.1)),
        ("f93e00", .float(1.5)),
        ("f97bff", .float(65504.0)),
        ("fa47c35000", .float(100_000.0)),
        ("fa7f7fffff", .float(3.4028234663852886e+38)),
        ("fb7e37e43c8800759c", .float(1.0e+300)),
        ("f90001", .float(5.960464477539063e-8)),
        ("f90400", .float(0.00006103515625)),
        ("f9c400", .float(-4.0)),
        ("fbc010666666666666", .float(-4.1)),
        ("f97c00", .float(.infinity)),
        ("f97e00", .float(.nan)),
        ("f9fc00", .float(-.infinity)),
        ("f4", .bool(false)),
        ("f5", .bool(true)),
        ("f6", .null),
        ("f7", .undefined),
        ("f0", .simple(16)),
        ("f8ff", .simple(255)),
        ("c074323031332d30332d32315432303a30343a30305a", .tagged(0, .text("2013-03-21T20:04:00Z"))),
        ("c11a514b67b0", .tagged(1, .unsigned(1_363_896_240))),
        ("c1fb41d452d9ec200000", .tagged(1, .float(1_363_896_240.5))),
        ("d74401020304", .tagged(23, .bytes([1, 2, 3, 4]))),
        ("d818456449455446", .tagged(24, .bytes([0x64, 0x49, 0x45, 0x54, 0x46]))),
        ("d82076687474703a2f2f7777772e6578616d706c652e636f6d", .tagged(32, .text("http://www.example.com"))),
        ("40", .bytes([])),
        ("4401020304", .bytes([1, 2, 3, 4])),
        ("60", .text("")),
        ("6161", .text("a")),
        ("6449455446", .text("IETF")),
        ("62225c", .text("\"\\")),
        ("62c3bc", .text("\u{00FC}")),
        ("63e6b0b4", .text("\u{6C34}")),
        ("64f0908591", .text("\u{10151}")),
        ("80", .array([])),
        ("83010203", .array([.unsigned(1), .unsigned(2), .unsigned(3)])),
        ("8301820203820405", .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])),
        ("98190102030405060708090a0b0c0d0e0f101112131415161718181819", .array((1...25).map { .unsigned($0) })),
        ("a0", .map(CBORMap())),
        ("a201020304", .map(CBORMap([.unsigned(1): .unsigned(2), .unsigned(3): .unsigned(4)]))),
        ("a26161016162820203", .map(CBORMap([.text("a"): .unsigned(1), .text("b"): .array([.unsigned(2), .unsigned(3)])]))),
        ("826161a161626163", .array([.text("a"), .map(CBORMap([.text("b"): .text("c")]))])),
        ("a56161614161626142616361436164614461656145", .map(CBORMap([
            .text("a"): .text("A"), .text("b"): .text("B"), .text("c"): .text("C"), .text("d"): .text("D"),
            .text("e"): .text("E"),
        ]))),
    ]

    @Test(arguments: canonicalExamples)
    func preferredExampleDecodesInBothModes(hex: String, value: CBORValue) throws {
        #expect(try CBORDecoder().decode([UInt8](hex: hex)) == value)
        #expect(try CBORDecoder(options: .canonical).decode([UInt8](hex: hex)) == value)
    }

    @Test(arguments: canonicalExamples)
    func preferredExampleEncodesToItsBytes(hex: String, value: CBORValue) {
        #expect(CBOREncoder.encode(value).hex == hex)
    }

    /// Floats in a longer form than needed: fine by default, refused in canonical mode, and
    /// re-encoded in their shortest form.
    static let longerFloats: [(String, Double, String)] = [
        ("fa7f800000", .infinity, "f97c00"),
        ("fa7fc00000", .nan, "f97e00"),
        ("faff800000", -.infinity, "f9fc00"),
        ("fb7ff0000000000000", .infinity, "f97c00"),
        ("fb7ff8000000000000", .nan, "f97e00"),
        ("fbfff0000000000000", -.infinity, "f9fc00"),
    ]

    @Test(arguments: longerFloats)
    func longerFloatExampleDecodesByDefaultAndEncodesShorter(hex: String, value: Double, shortest: String) throws {
        let decoded = try CBORDecoder().decode([UInt8](hex: hex))
        #expect(decoded == .float(value))
        #expect(CBOREncoder.encode(decoded).hex == shortest)
    }

    @Test(arguments: longerFloats)
    func longerFloatExampleIsNotCanonical(hex: String, value: Double, shortest: String) {
        #expect(throws: CBORError.nonMinimalEncoding(offset: 0)) {
            try CBORDecoder(options: .canonical).decode([UInt8](hex: hex))
        }
    }

    /// RFC 8949 §3.3 made `f818` (simple value 24 in two bytes) not well-formed, so the example
    /// RFC 7049 listed is now refused.
    @Test func twoByteSimpleValue24IsRefused() {
        #expect(throws: CBORError.invalidSimpleValue(offset: 0)) { try CBORDecoder().decode([0xF8, 0x18]) }
    }

    static let indefiniteLengthExamples: [Malformed] = [
        Malformed("5f42010243030405ff", .indefiniteLength(offset: 0), "byte string"),
        Malformed("7f657374726561646d696e67ff", .indefiniteLength(offset: 0), "text string"),
        Malformed("9fff", .indefiniteLength(offset: 0), "empty array"),
        Malformed("9f018202039f0405ffff", .indefiniteLength(offset: 0), "array of arrays"),
        Malformed("9f01820203820405ff", .indefiniteLength(offset: 0), "outer array"),
        Malformed("83018202039f0405ff", .indefiniteLength(offset: 5), "third element"),
        Malformed("83019f0203ff820405", .indefiniteLength(offset: 2), "second element"),
        Malformed("9f0102030405060708090a0b0c0d0e0f101112131415161718181819ff", .indefiniteLength(offset: 0), "long array"),
        Malformed("bf61610161629f0203ffff", .indefiniteLength(offset: 0), "map"),
        Malformed("826161bf61626163ff", .indefiniteLength(offset: 3), "map in an array"),
        Malformed("bf6346756ef563416d7421ff", .indefiniteLength(offset: 0), "map of mixed values"),
    ]

    @Test(arguments: indefiniteLengthExamples)
    func indefiniteLengthExampleIsRefusedInBothModes(_ example: Malformed) {
        #expect(throws: example.error) { try CBORDecoder().decode(example.bytes) }
        #expect(throws: example.error) { try CBORDecoder(options: .canonical).decode(example.bytes) }
    }
}
