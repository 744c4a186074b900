import Foundation

/// Base64url without padding (RFC 4648 §5), the encoding JOSE and the device protocol use.
///
/// Encoded and decoded byte by byte: every signed request, token and sealed payload passes
/// through here several times, and a detour through Foundation's string search costs more than
/// the signature it carries.
extension Data {
    /// Decodes unpadded base64url; returns nil for any character outside the alphabet (padding
    /// included), a length no encoding has, or unused low bits that are not zero (so that each
    /// byte string has exactly one encoding).
    public init?(base64URLEncoded string: some StringProtocol) {
        let text = String(string)
        guard let decoded = text.utf8.withContiguousStorageIfAvailable({ Base64URL.decode($0) })
            ?? Base64URL.decode(Array(text.utf8)) else { return nil }
        self = decoded
    }

    /// This data as unpadded base64url.
    public var base64URLEncodedString: String {
        Base64URL.encode(self)
    }
}

enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each ASCII byte's six-bit value, or 0xFF outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    static func encode(_ data: Data) -> String {
        let count = data.count
        let length = count / 3 * 4 + [0, 2, 3][count % 3]
        return String(unsafeUninitializedCapacity: length) { output in
            data.withUnsafeBytes { input in
                var read = 0
                var written = 0
                while read + 3 <= count {
                    let word = UInt32(input[read]) << 16 | UInt32(input[read + 1]) << 8 | UInt32(input[read + 2])
                    output[written] = alphabet[Int(word >> 18 & 63)]
                    output[written + 1] = alphabet[Int(word >> 12 & 63)]
                    output[written + 2] = alphabet[Int(word >> 6 & 63)]
                    output[written + 3] = alphabet[Int(word & 63)]
                    read += 3
                    written += 4
                }
                switch count - read {
                case 1:
                    let word = UInt32(input[read]) << 16
                    output[written] = alphabet[Int(word >> 18 & 63)]
                    output[written + 1] = alphabet[Int(word >> 12 & 63)]
                case 2:
                    let word = UInt32(input[read]) << 16 | UInt32(input[read + 1]) << 8
                    output[written] = alphabet[Int(word >> 18 & 63)]
                    output[written + 1] = alphabet[Int(word >> 12 & 63)]
                    output[written + 2] = alphabet[Int(word >> 6 & 63)]
                default:
                    break
                }
            }
            return length
        }
    }

    static func decode(_ input: some RandomAccessCollection<UInt8>) -> Data? {
        let count = input.count
        guard count % 4 != 1 else { return nil }
        let length = count / 4 * 3 + [0, 0, 1, 2][count % 4]
        var output = [UInt8](repeating: 0, count: length)
        var written = 0
        var word: UInt32 = 0
        var bits = 0
        for character in input {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            word = word << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output[written] = UInt8(truncatingIfNeeded: word >> UInt32(bits))
                written += 1
                word &= (1 << UInt32(bits)) - 1
            }
        }
        // The leftover bits (2 or 4) pad the last byte and must be zero.
        guard word == 0 else { return nil }
        return Data(output)
    }
}
