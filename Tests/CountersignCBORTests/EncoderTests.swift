import CountersignCBOR
import Testing

/// What `CBOREncoder` writes: the one CTAP2 canonical encoding of a value.
@Suite struct EncoderTests {
    static let integers: [(CBORValue, String)] = [
        (.unsigned(0), "00"),
        (.unsigned(23), "17"),
        (.unsigned(24), "1818"),
        (.unsigned(255), "18ff"),
        (.unsigned(256), "190100"),
        (.unsigned(65_535), "19ffff"),
        (.unsigned(65_536), "1a00010000"),
        (.unsigned(4_294_967_295), "1affffffff"),
        (.unsigned(4_294_967_296), "1b0000000100000000"),
        (.unsigned(.max), "1bffffffffffffffff"),
        (CBORValue(-24), "37"),
        (CBORValue(-25), "3818"),
        (CBORValue(-257), "390100"),
        (CBORValue(.min), "3b7fffffffffffffff"),
        (.negative(.max), "3bffffffffffffffff"),
    ]

    @Test(arguments: integers)
    func integersTakeTheShortestHead(value: CBORValue, hex: String) {
        #expect(CBOREncoder.encode(value).hex == hex)
    }

    @Test func lengthsTakeTheShortestHead() {
        #expect(CBOREncoder.encode(.bytes(Array(repeating: 0, count: 24))).prefix(2) == [0x58, 24])
        #expect(CBOREncoder.encode(.text(String(repeating: "a", count: 256))).prefix(3) == [0x79, 0x01, 0x00])
        #expect(CBOREncoder.encode(.array(Array(repeating: .null, count: 23))).first == 0x97)
    }

    @Test func mapKeysAreWrittenInCTAP2Order() {
        let map = CBORMap([
            .text("b"): .null, CBORValue(10): .null, .text("aa"): .null, CBORValue(-1): .null,
            .bytes([0]): .null, CBORValue(24): .null, .simple(16): .null,
        ])
        #expect(CBOREncoder.encode(.map(map)).hex == "a7" + "0af6" + "1818f6" + "20f6" + "4100f6" + "6162f6" + "626161f6" + "f0f6")
    }

    static let floats: [(Double, String)] = [
        (1.0, "f93c00"),
        (-0.0, "f98000"),
        (65_504, "f97bff"),
        (65_505, "fa477fe100"),
        (0x1p-24, "f90001"),
        (0x1p-25, "fa33000000"),
        (Double(Float.leastNonzeroMagnitude), "fa00000001"),
        (1.1, "fb3ff199999999999a"),
        (1e300, "fb7e37e43c8800759c"),
        (.infinity, "f97c00"),
        (.nan, "f97e00"),
        (.leastNonzeroMagnitude, "fb0000000000000001"),
    ]

    @Test(arguments: floats)
    func floatsTakeTheShortestExactWidth(value: Double, hex: String) throws {
        #expect(CBOREncoder.encode(.float(value)).hex == hex)
        #expect(try CBORDecoder(options: .canonical).decode([UInt8](hex: hex)) == .float(value))
    }

    /// A NaN payload survives encoding and decoding bit for bit, at whatever width holds it.
    static let nanPayloads: [(UInt64, String)] = [
        (0x7FF0_0000_0000_0001, "fb7ff0000000000001"),
        (0xFFF8_0000_2000_0000, "faffc00001"),
        (0x7FF0_0400_0000_0000, "f97c01"),
    ]

    @Test(arguments: nanPayloads)
    func nanPayloadsArePreserved(bits: UInt64, hex: String) throws {
        let value = CBORValue.float(Double(bitPattern: bits))
        #expect(CBOREncoder.encode(value).hex == hex)
        let decoded = try CBORDecoder(options: .canonical).decode([UInt8](hex: hex))
        guard case .float(let double) = decoded else { Issue.record("decoded \(decoded)"); return }
        #expect(double.bitPattern == bits)
    }

    @Test func simpleValuesUseTheOneOrTwoByteForm() {
        #expect(CBOREncoder.encode(.simple(0)).hex == "e0")
        #expect(CBOREncoder.encode(.simple(19)).hex == "f3")
        #expect(CBOREncoder.encode(.simple(32)).hex == "f820")
        #expect(CBOREncoder.encode(.bool(true)).hex == "f5")
        #expect(CBOREncoder.encode(.undefined).hex == "f7")
    }

    @Test func textIsWrittenAsItsOwnUTF8() {
        #expect(CBOREncoder.encode(.text("e\u{301}")).hex == "6365cc81")
        #expect(CBOREncoder.encode(.text("\u{E9}")).hex == "62c3a9")
    }
}
