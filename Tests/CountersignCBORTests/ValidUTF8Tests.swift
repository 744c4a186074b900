import CountersignCBOR
import Testing

/// `String(validUTF8:)` stands in for the standard library's `String(validating:as:)`, which
/// iOS 17 lacks; where both exist they must agree on every input.
@Suite("UTF-8 validation without Swift 6's library")
struct ValidUTF8Tests {
    static let sequences: [[UInt8]] = [
        [], Array("plain ASCII".utf8), Array("Zürich · 東京 · 🔐".utf8),
        [0xEF, 0xBF, 0xBD],  // U+FFFD itself is well formed
        [0xC0, 0xAF],  // overlong "/"
        [0xE0, 0x80, 0xAF],  // overlong, three bytes
        [0xED, 0xA0, 0x80],  // a surrogate (U+D800)
        [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
        [0xF0, 0x9F, 0x94],  // truncated four-byte sequence
        [0x80], [0xFF], [0x61, 0xC3],  // stray continuation, never-valid byte, cut short
        [0x61, 0x00, 0x62],  // NUL is well formed
    ]

    @Test("agrees with String(validating:as:) on crafted sequences", arguments: sequences)
    func crafted(_ bytes: [UInt8]) {
        #expect(String(validUTF8: bytes) == String(validating: bytes, as: UTF8.self))
        // A collection without contiguous storage takes the byte-by-byte comparison.
        #expect(String(validUTF8: bytes.lazy.map { $0 }) == String(validating: bytes, as: UTF8.self))
    }

    @Test("agrees with String(validating:as:) on 20,000 random byte strings")
    func random() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<20_000 {
            // Mostly bytes from the multi-byte ranges, so that both outcomes are common.
            let bytes = (0..<(length % 9)).map { _ in
                UInt8.random(in: Bool.random(using: &generator) ? 0x80...0xF5 : 0x00...0xFF, using: &generator)
            }
            #expect(String(validUTF8: bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
        }
    }
}
