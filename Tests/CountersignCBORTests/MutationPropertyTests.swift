import CountersignCBOR
import Testing

/// Thousands of deterministic mutations of valid inputs: none may crash the decoder, every
/// error must point inside the input, and whatever decodes must survive canonical re-encoding.
@Suite struct MutationPropertyTests {
    /// SplitMix64: a fixed seed gives the same mutations on every run and every platform.
    struct Mutator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

        mutating func mutate(_ input: [UInt8]) -> [UInt8] {
            var bytes = input
            for _ in 0...below(3) {
                switch below(6) {
                case 0 where !bytes.isEmpty:
                    bytes[below(bytes.count)] ^= 1 << UInt8(below(8))
                case 1 where !bytes.isEmpty:
                    bytes.removeLast(below(bytes.count) + 1)
                case 2:
                    bytes.insert(UInt8(truncatingIfNeeded: next()), at: below(bytes.count + 1))
                case 3 where !bytes.isEmpty:
                    bytes.remove(at: below(bytes.count))
                case 4 where !bytes.isEmpty:
                    bytes[below(bytes.count)] = Self.interestingBytes[below(Self.interestingBytes.count)]
                default:
                    let start = below(bytes.count + 1)
                    let end = start + below(bytes.count - start + 1)
                    bytes.insert(contentsOf: bytes[start..<end], at: below(bytes.count + 1))
                }
            }
            return bytes
        }

        /// Heads that change an item's kind or claimed size.
        static let interestingBytes: [UInt8] = [
            0x00, 0x17, 0x18, 0x1B, 0x1F, 0x3B, 0x5B, 0x7B, 0x9B, 0xBB, 0xC0, 0xF8, 0xF9, 0xFA, 0xFB, 0xFF, 0x80, 0xA0,
        ]
    }

    static let seeds: [[UInt8]] = AppendixATests.canonicalExamples.map { [UInt8](hex: $0.0) } + [
        CanonicalFormTests.coseKey,
        [UInt8](hex: "a363666d74646e6f6e656761747453746d74a068617574684461746158250102"),
        [UInt8](hex: "a3010203262001"),
        [UInt8](hex: "83a2616101616282f93c00fa47c35000c24101d8204100f5f6f7f820"),
        [UInt8](hex: "a3190100818080626162f6c1c2c3f98000"),
    ]

    @Test func mutatedInputsNeverBreakTheRoundTrip() throws {
        var mutator = Mutator(state: 0xC0FFEE)
        var decodedCount = 0
        for round in 0..<6_000 {
            let input = mutator.mutate(Self.seeds[round % Self.seeds.count])
            for decoder in [CBORDecoder(), CBORDecoder(options: .canonical)] {
                do {
                    let value = try decoder.decode(input)
                    decodedCount += 1
                    let encoded = CBOREncoder.encode(value)
                    #expect(try CBORDecoder(options: .canonical).decode(encoded) == value, "\(input.hex)")
                    if decoder.options.requireCanonical {
                        #expect(encoded == input, "canonical input \(input.hex) re-encoded as \(encoded.hex)")
                    }
                } catch {
                    #expect(error.offset <= input.count, "\(error) for \(input.hex)")
                }
            }
        }
        // The mutations must leave enough valid inputs for the round trip to mean something.
        #expect(decodedCount > 1_000)
    }
}
