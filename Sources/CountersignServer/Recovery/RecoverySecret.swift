import Crypto
import Foundation
import NIOPosix
import _CryptoExtras

/// A recovery code or a temporary access pass as the person reads and types it: groups of four
/// characters of Crockford's base32, lowercase (`7kq2-m9xd-4hfp`). Crockford's alphabet has no
/// `i`, `l`, `o` or `u`; typed ones are read as `1`, `1` and `0` (and `u` is refused), case,
/// spaces and hyphens do not matter.
///
/// The first group is the secret's *lookup*: it finds the one stored row to check, so a try
/// costs one slow hash, not one per code. It is unique among a user's live codes (and passes),
/// and secret like the rest; the whole code is what is hashed.
///
/// ```swift
/// let code = RecoverySecret.generate(groups: 3)          // "7kq2-m9xd-4hfp"
/// RecoverySecret(typed: "7KQ2 M9XD 4HFP", groups: 3)      // the same
/// ```
package struct RecoverySecret: Sendable, Equatable {
    static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz")
    static let groupLength = 4

    /// The characters, without separators: `groups × 4` of the alphabet.
    package let normalized: String

    /// The first group.
    var lookup: String { String(normalized.prefix(Self.groupLength)) }

    /// As shown: groups joined by hyphens.
    var formatted: String {
        stride(from: 0, to: normalized.count, by: Self.groupLength).map { start in
            let from = normalized.index(normalized.startIndex, offsetBy: start)
            return String(normalized[from..<normalized.index(from, offsetBy: Self.groupLength)])
        }.joined(separator: "-")
    }

    /// A new secret of `groups` groups, from the system's random generator (5 bits a character:
    /// 60 bits for three groups, 80 for four).
    package static func generate(groups: Int) -> RecoverySecret {
        var generator = SystemRandomNumberGenerator()
        let characters = (0..<(groups * groupLength)).map { _ in alphabet[Int(generator.next(upperBound: UInt8(32)))] }
        return RecoverySecret(normalized: String(characters))
    }

    private init(normalized: String) {
        self.normalized = normalized
    }

    /// What the person typed, if it is a secret of `groups` groups: nil for anything else (a
    /// wrong length, a character outside the alphabet). At most 64 characters are looked at.
    init?(typed: String, groups: Int) {
        guard typed.utf8.count <= 64 else { return nil }
        var characters: [Character] = []
        for scalar in typed.unicodeScalars {
            switch scalar {
            case " ", "-", "\t": continue
            case "0"..."9": characters.append(Character(scalar))
            case "a"..."z", "A"..."Z":
                let lower = Character(String(scalar).lowercased())
                switch lower {
                case "o": characters.append("0")
                case "i", "l": characters.append("1")
                case "u": return nil
                default: characters.append(lower)
                }
            default: return nil
            }
        }
        guard characters.count == groups * Self.groupLength else { return nil }
        normalized = String(characters)
    }
}

/// The slow hash recovery codes and temporary access passes are stored as: scrypt (RFC 7914,
/// memory-hard) with a random 16-byte salt per secret, N = 2^15, r = 8, p = 1 (32 MiB, the
/// cost OWASP's password storage guidance gives as its floor for scrypt is 2^17 for passwords;
/// these secrets carry 60 or 80 random bits, so the hash only has to make a stolen table
/// useless, not stretch a guessable password), 32 bytes out. Checked in constant time.
///
/// A hash takes tens of milliseconds of CPU and 32 MiB, so it runs on a pool of its own, one
/// thread per core: not on Swift's concurrency pool, whose few threads serve every request, nor
/// on NIO's shared blocking pool, whose file I/O a burst of tries would hold up. The pool also
/// bounds the memory: no more hashes are in flight than it has threads.
package enum RecoveryHash {
    static let rounds = 1 << 15
    static let blockSize = 8
    static let parallelism = 1
    static let saltLength = 16

    package struct Stored: Sendable, Equatable {
        let salt: Data
        let hash: Data
    }

    /// The salt and hash to store for `secret`.
    package static func make(_ secret: RecoverySecret) async throws -> Stored {
        let salt = Data((0..<saltLength).map { _ in UInt8.random(in: .min ... .max) })
        return Stored(salt: salt, hash: try await derive(secret.normalized, salt: salt))
    }

    /// Whether `secret` is the one `stored` was made from; with nil, a hash is made all the
    /// same (of a salt nobody holds), so that a lookup that found nothing takes as long.
    package static func matches(_ secret: RecoverySecret, _ stored: Stored?) async throws -> Bool {
        let salt = stored?.salt ?? Data(repeating: 0, count: saltLength)
        let derived = try await derive(secret.normalized, salt: salt)
        guard let stored else { return false }
        return Secrets.constantTimeEqual(derived, stored.hash)
    }

    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(1, ProcessInfo.processInfo.activeProcessorCount))
        pool.start()
        return pool
    }()

    private static func derive(_ text: String, salt: Data) async throws -> Data {
        try await pool.runIfActive {
            let key = try KDF.Scrypt.deriveKey(
                from: Data(text.utf8), salt: salt, outputByteCount: 32, rounds: rounds, blockSize: blockSize,
                parallelism: parallelism)
            return key.withUnsafeBytes { Data($0) }
        }
    }
}
