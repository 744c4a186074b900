import Crypto
import Foundation

/// Bearer secrets (admin API keys, client secrets, enrollment tickets): 256 random bits,
/// shown once, stored only as SHA-256. A fast hash suffices because the secrets are random and
/// long — there is no dictionary to try — and it keeps every authenticated call cheap.
public enum Secrets {
    /// `prefix` followed by 32 random bytes in base64url.
    public static func generate(prefix: String) -> String {
        prefix + randomBytes(32).base64URLEncodedString
    }

    public static func randomBytes(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// The stored form of a secret.
    public static func hash(_ secret: String) -> Data {
        Data(SHA256.hash(data: Data(secret.utf8)))
    }

    /// Compares two byte strings in time that depends only on their lengths.
    public static func constantTimeEqual(_ lhs: Data, _ rhs: Data) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }

    /// Whether `secret` hashes to `storedHash`, compared in constant time.
    public static func matches(_ secret: String, storedHash: Data) -> Bool {
        constantTimeEqual(hash(secret), storedHash)
    }
}

/// Identifiers: a type prefix, then 26 characters of Crockford base32 holding a 48-bit
/// millisecond timestamp and 80 random bits. They sort by creation time, which makes keyset
/// pagination (`WHERE id > cursor ORDER BY id`) return records in creation order.
public enum Identifier {
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz")

    public static func make(_ prefix: String, at date: Date) -> String {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8((milliseconds >> (8 * (5 - index))) & 0xff) }
        let random = Secrets.randomBytes(10)
        for index in 0..<10 { bytes[6 + index] = random[index] }
        // 128 bits → 26 base32 characters (the first carries 3 bits).
        var value = bytes
        var characters: [Character] = []
        for _ in 0..<26 {
            var remainder: UInt16 = 0
            for index in 0..<value.count {
                let accumulator = (remainder << 8) | UInt16(value[index])
                value[index] = UInt8(accumulator / 32)
                remainder = accumulator % 32
            }
            characters.append(alphabet[Int(remainder)])
        }
        return prefix + "_" + String(characters.reversed())
    }
}
