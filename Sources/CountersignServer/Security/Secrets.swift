import Crypto
import Foundation
import Synchronization

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
/// pagination (`WHERE id > cursor ORDER BY id`) return records in creation order. Within one
/// millisecond of one process the random part counts up from the previous identifier, so that
/// order holds there too.
public enum Identifier {
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz")
    private static let last = Mutex<(milliseconds: UInt64, random: [UInt8])>((0, []))

    public static func make(_ prefix: String, at date: Date) -> String {
        let clock = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        let (milliseconds, random) = last.withLock { last -> (UInt64, [UInt8]) in
            if clock <= last.milliseconds, !last.random.isEmpty, let next = increment(last.random) {
                last.random = next
            } else {
                last = (max(clock, last.milliseconds), Array(Secrets.randomBytes(10)))
            }
            return (last.milliseconds, last.random)
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8((milliseconds >> (8 * (5 - index))) & 0xff) }
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

    /// The big-endian successor, or nil on overflow (then a fresh random part is drawn).
    private static func increment(_ bytes: [UInt8]) -> [UInt8]? {
        var next = bytes
        for index in next.indices.reversed() {
            if next[index] == 0xff {
                next[index] = 0
            } else {
                next[index] += 1
                return next
            }
        }
        return nil
    }
}
