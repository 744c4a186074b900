import CountersignCBOR
import Testing

/// Inputs that once crashed the decoder under the fuzzer (Fuzz/), kept so they stay fixed.
@Suite struct FuzzRegressionTests {
    /// A half float with a biased exponent below 15: widening it to a double once subtracted the
    /// bias before adding the double's and overflowed.
    @Test func halfFloatWithASmallExponentWidensExactly() throws {
        let value = try CBORDecoder(options: .canonical).decode([0xF9, 0x0A, 0x30])
        #expect(value == .float(0x1.8Cp-13))
        #expect(CBOREncoder.encode(value) == [0xF9, 0x0A, 0x30])
    }

    @Test func everyHalfFloatReEncodesToItself() throws {
        let decoder = CBORDecoder(options: .canonical)
        for bits in UInt16.min...UInt16.max {
            let bytes: [UInt8] = [0xF9, UInt8(bits >> 8), UInt8(bits & 0xFF)]
            let encoded = CBOREncoder.encode(try decoder.decode(bytes))
            if encoded != bytes { Issue.record("half \(bytes.hex) re-encoded as \(encoded.hex)") }
        }
    }
}
