import Crypto
import Foundation

/// Seals secrets for storage with AES-256-GCM under the master key. Each sealed value names
/// what it is (`context`, e.g. `tenant-signing-key:ten_…`) as additional authenticated data,
/// so a sealed value copied into another row does not open there.
public struct SecretSealer: Sendable {
    private static let formatVersion: UInt8 = 1
    private static let checkContext = "master-key-check"
    private static let checkPlaintext = Data("countersign master key check v1".utf8)

    public let masterKey: MasterKey

    public init(masterKey: MasterKey) { self.masterKey = masterKey }

    /// `0x01 ‖ nonce (12) ‖ ciphertext ‖ tag (16)`.
    public func seal(_ plaintext: Data, context: String) throws -> Data {
        let box = try AES.GCM.seal(plaintext, using: masterKey.key, authenticating: Data(context.utf8))
        guard let combined = box.combined else { throw SealingError.cannotOpen(context) }
        return Data([Self.formatVersion]) + combined
    }

    /// Opens a sealed value. Any failure — wrong key, wrong context, tampering — is one error:
    /// on Linux AES-GCM reports authentication failures with a different error type than on
    /// Apple platforms, and no caller should tell them apart anyway.
    public func open(_ sealed: Data, context: String) throws(SealingError) -> Data {
        guard sealed.first == Self.formatVersion else { throw .unknownFormat }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed.dropFirst())
            return try AES.GCM.open(box, using: masterKey.key, authenticating: Data(context.utf8))
        } catch {
            throw .cannotOpen(context)
        }
    }

    /// Checks the master key against the database. The first start stores a sealed constant;
    /// every later start must open it, or the server refuses to run with a key that would
    /// leave every stored secret unreadable.
    public func verifyAgainst(_ database: any Database) async throws {
        try await database.transaction { executor in
            try await executor.lockForStartup()
            let records = ServerMetaRepository()
            if let value = try await records.value(of: Self.checkContext, on: executor) {
                guard let sealed = Data(base64Encoded: value),
                      let opened = try? open(sealed, context: Self.checkContext), opened == Self.checkPlaintext else {
                    throw MasterKeyError.mismatch(masterKey.identifier)
                }
                return
            }
            let sealed = try seal(Self.checkPlaintext, context: Self.checkContext)
            try await records.insert(Self.checkContext, value: sealed.base64EncodedString(), on: executor)
        }
    }
}

public enum SealingError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownFormat
    case cannotOpen(String)

    public var description: String {
        switch self {
        case .unknownFormat: "the sealed value has an unknown format"
        case .cannotOpen(let context): "the sealed \(context) cannot be opened with this master key"
        }
    }
}
