import CountersignCore
import Foundation

/// A tenant's key for signing the tokens it issues (ID tokens, access tokens), as stored: the
/// private key sealed under the master key, the public key as a JWK. `id` is the key's
/// RFC 7638 thumbprint, which tokens carry as `kid`.
public struct StoredTokenSigningKey: Sendable, Equatable {
    public var id: String
    public var tenantID: String
    public var sealedKey: Data
    public var publicKey: TokenPublicKey
    public var createdAt: Date
    /// When the key stopped being published; nil while it is.
    public var retiredAt: Date?

    public var algorithm: TokenSigningAlgorithm { publicKey.algorithm }
}

extension [StoredTokenSigningKey] {
    /// The keys of one algorithm, in the same order: each algorithm's keys rotate on their own.
    func of(_ algorithm: TokenSigningAlgorithm) -> [StoredTokenSigningKey] {
        filter { $0.algorithm == algorithm }
    }
}

/// The storage token-signing keys need.
public protocol TokenSigningKeyRepository: Sendable {
    func insert(_ key: StoredTokenSigningKey, on executor: any SQLExecutor) async throws
    /// The tenant's keys that are not retired, oldest first.
    func published(tenantID: String, on executor: any SQLExecutor) async throws -> [StoredTokenSigningKey]
    /// Stops publishing the key.
    func retire(id: String, at date: Date, on executor: any SQLExecutor) async throws
    /// Serialises key creation and retirement for one tenant until the transaction of `executor`
    /// ends, so that two nodes starting or rotating at once create one key, not two.
    func lockForKeyCreation(tenantID: String, on executor: any SQLExecutor) async throws
}

public struct SQLTokenSigningKeyRepository: TokenSigningKeyRepository {
    public init() {}

    public func insert(_ key: StoredTokenSigningKey, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO token_signing_keys (id, tenant_id, algorithm, sealed_key, public_jwk, created_at, retired_at)
            VALUES (\(key.id), \(key.tenantID), \(key.algorithm.rawValue), \(key.sealedKey), \(try key.publicKey.json.canonicalString), \(key.createdAt), \(key.retiredAt))
            """)
    }

    public func published(tenantID: String, on executor: any SQLExecutor) async throws -> [StoredTokenSigningKey] {
        try await executor.run(
            """
            SELECT id, tenant_id, algorithm, sealed_key, public_jwk, created_at, retired_at FROM token_signing_keys
            WHERE tenant_id = \(tenantID) AND retired_at IS NULL ORDER BY created_at, algorithm, id
            """
        ).map(Self.decode)
    }

    public func retire(id: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            "UPDATE token_signing_keys SET retired_at = \(date) WHERE id = \(id) AND retired_at IS NULL")
    }

    public func lockForKeyCreation(tenantID: String, on executor: any SQLExecutor) async throws {
        // SQLite transactions begin IMMEDIATE and so already exclude every other writer; on
        // PostgreSQL the tenant's row is the lock.
        guard executor.dialect == .postgres else { return }
        try await executor.run("SELECT id FROM tenants WHERE id = \(tenantID) FOR UPDATE")
    }

    static func decode(_ row: SQLRow) throws -> StoredTokenSigningKey {
        let jwk = Data(try row.string("public_jwk").utf8)
        let publicKey: TokenPublicKey? = switch TokenSigningAlgorithm(rawValue: try row.string("algorithm")) {
        case .es256: (try? JSONDecoder().decode(ECPublicJWK.self, from: jwk)).map(TokenPublicKey.ec)
        case .rs256: (try? JSONDecoder().decode(RSAPublicJWK.self, from: jwk)).map(TokenPublicKey.rsa)
        case nil: nil
        }
        guard let publicKey else { throw StorageError.corrupt("token signing key \(try row.string("id"))") }
        return StoredTokenSigningKey(
            id: try row.string("id"), tenantID: try row.string("tenant_id"), sealedKey: try row.data("sealed_key"),
            publicKey: publicKey, createdAt: try row.date("created_at"), retiredAt: try row.optionalDate("retired_at"))
    }
}
