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
    /// Every key the tenant has had, retired ones included, oldest first.
    func all(tenantID: String, on executor: any SQLExecutor) async throws -> [StoredTokenSigningKey]
    /// Stops publishing the key.
    func retire(id: String, at date: Date, on executor: any SQLExecutor) async throws
    /// Serialises key creation and retirement for one tenant until the transaction of `executor`
    /// ends, so that two nodes starting or rotating at once create one key, not two.
    func lockForKeyCreation(tenantID: String, on executor: any SQLExecutor) async throws
}

public struct SQLTokenSigningKeyRepository: TokenSigningKeyRepository {
    public init() {}

    private typealias Row = TokenSigningKeyRow

    public func insert(_ key: StoredTokenSigningKey, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO token_signing_keys (id, tenant_id, algorithm, sealed_key, public_jwk, created_at, retired_at)
            VALUES (\(key.id), \(key.tenantID), \(key.algorithm), \(key.sealedKey),
                \(try key.publicKey.json.canonicalString), \(key.createdAt), \(key.retiredAt))
            """)
    }

    public func published(tenantID: String, on executor: any SQLExecutor) async throws -> [StoredTokenSigningKey] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM token_signing_keys
            WHERE tenant_id = \(tenantID) AND retired_at IS NULL ORDER BY created_at, algorithm, id
            """, as: Row.self
        ).map { try $0.key() }
    }

    public func all(tenantID: String, on executor: any SQLExecutor) async throws -> [StoredTokenSigningKey] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM token_signing_keys
            WHERE tenant_id = \(tenantID) ORDER BY created_at, algorithm, id
            """, as: Row.self
        ).map { try $0.key() }
    }

    public func retire(id: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            "UPDATE token_signing_keys SET retired_at = \(date) WHERE id = \(id) AND retired_at IS NULL")
    }

    public func lockForKeyCreation(tenantID: String, on executor: any SQLExecutor) async throws {
        // SQLite transactions begin IMMEDIATE and so already exclude every other writer; on
        // PostgreSQL a lock of the transaction's, keyed by the tenant (the two-key space, apart
        // from the start-up lock's single key), held until it ends.
        guard executor.dialect == .postgres else { return }
        try await executor.run("SELECT pg_advisory_xact_lock(4242002, hashtext(\(tenantID))) IS NULL AS locked")
    }
}

/// A row of `token_signing_keys` as stored: decoded by column name, then turned into a
/// `StoredTokenSigningKey` (the public key parsed as its algorithm's JWK).
struct TokenSigningKeyRow: Decodable {
    /// The columns `CodingKeys` names, for `SELECT`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var tenantID: String
    var algorithm: TokenSigningAlgorithm
    var sealedKey: Data
    /// The public key as a JWK of `algorithm`.
    var publicJWK: String
    var createdAt: Date
    var retiredAt: Date?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case algorithm
        case sealedKey = "sealed_key"
        case publicJWK = "public_jwk"
        case createdAt = "created_at"
        case retiredAt = "retired_at"
    }

    /// The key. A public key that is not a JWK of its algorithm means the row was altered.
    func key() throws(StorageError) -> StoredTokenSigningKey {
        let jwk = Data(publicJWK.utf8)
        let publicKey: TokenPublicKey? = switch algorithm {
        case .es256: (try? JSONDecoder().decode(ECPublicJWK.self, from: jwk)).map(TokenPublicKey.ec)
        case .rs256: (try? JSONDecoder().decode(RSAPublicJWK.self, from: jwk)).map(TokenPublicKey.rsa)
        }
        guard let publicKey else { throw .corrupt("token signing key \(id)") }
        return StoredTokenSigningKey(
            id: id, tenantID: tenantID, sealedKey: sealedKey, publicKey: publicKey, createdAt: createdAt,
            retiredAt: retiredAt)
    }
}
