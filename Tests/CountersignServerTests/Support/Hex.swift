import Foundation

/// Hexadecimal text and the octets it spells, for fixtures and peers that speak hex.
enum Hex {
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    static func bytes(_ string: String) throws -> [UInt8] {
        let digits = Array(string.utf8)
        guard digits.count % 2 == 0 else { throw Malformed(description: "odd-length hex") }
        return try stride(from: 0, to: digits.count, by: 2).map { index in
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else {
                throw Malformed(description: "not hex at \(index)")
            }
            return byte
        }
    }

    static func string(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
