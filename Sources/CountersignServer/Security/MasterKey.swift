import Crypto
import Foundation

/// The key that seals every stored secret (tenant signing keys now; push credentials and TOTP
/// seeds later). It comes from `COUNTERSIGN_MASTER_KEY` (32 bytes, base64) or from a file in
/// the data directory that the first start creates with mode 0600. It never touches the
/// database: a stolen database alone reveals no secret.
public struct MasterKey: Sendable {
    let key: SymmetricKey

    /// A short, non-secret identifier for logs and errors: the first bytes of SHA-256 of a
    /// derivation of the key, never the key itself.
    public let identifier: String

    public init(bytes: Data) throws(MasterKeyError) {
        guard bytes.count == 32 else { throw .wrongLength(bytes.count) }
        self.key = SymmetricKey(data: bytes)
        let tag = HMAC<SHA256>.authenticationCode(for: Data("countersign master key id".utf8), using: key)
        self.identifier = Data(tag).prefix(6).map { String(format: "%02x", $0) }.joined()
    }

    /// Parses base64 or base64url text (surrounding white space ignored).
    public init(encoded text: String) throws(MasterKeyError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: trimmed) ?? Data(base64URLEncoded: trimmed) else { throw .notBase64 }
        try self.init(bytes: bytes)
    }

    /// A new random key.
    public static func generate() -> MasterKey {
        // 32 random bytes always form a valid key.
        try! MasterKey(bytes: SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
    }

    /// The key as base64, the form of the key file and of `COUNTERSIGN_MASTER_KEY`.
    public var base64: String { key.withUnsafeBytes { Data($0) }.base64EncodedString() }

    /// Loads the key from `environmentValue` if set; otherwise from `file`, creating it with
    /// mode 0600 if it does not exist. Returns the key and whether it was just created.
    public static func load(environmentValue: String?, file: URL) throws(MasterKeyError) -> (MasterKey, created: Bool) {
        if let environmentValue, !environmentValue.isEmpty {
            return (try MasterKey(encoded: environmentValue), false)
        }
        let manager = FileManager.default
        if manager.fileExists(atPath: file.path) {
            if let attributes = try? manager.attributesOfItem(atPath: file.path),
               let permissions = attributes[.posixPermissions] as? NSNumber, permissions.intValue & 0o077 != 0 {
                throw .insecureFile(file.path, permissions.intValue)
            }
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { throw .unreadable(file.path) }
            return (try MasterKey(encoded: text), false)
        }
        let key = generate()
        guard manager.createFile(atPath: file.path, contents: Data((key.base64 + "\n").utf8),
                                 attributes: [.posixPermissions: 0o600]) else {
            throw .unwritable(file.path)
        }
        return (key, true)
    }
}

/// Why the master key could not be used. The server refuses to start with any of these.
public enum MasterKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    case wrongLength(Int)
    case notBase64
    case unreadable(String)
    case unwritable(String)
    case insecureFile(String, Int)
    case mismatch(String)

    public var description: String {
        switch self {
        case .wrongLength(let count): "the master key must be 32 bytes, not \(count)"
        case .notBase64: "the master key must be base64-encoded"
        case .unreadable(let path): "cannot read the master key file \(path)"
        case .unwritable(let path): "cannot create the master key file \(path)"
        case .insecureFile(let path, let mode):
            "the master key file \(path) is readable by others (mode \(String(mode, radix: 8))); chmod 600 it"
        case .mismatch(let identifier):
            "the master key (id \(identifier)) is not the one this database's secrets were sealed with; "
                + "start with the original key (COUNTERSIGN_MASTER_KEY or master.key in the data directory)"
        }
    }
}
