import CountersignCore
import Foundation
import JWTKit
import Synchronization

/// A tenant's token-signing key, opened: what signs ID tokens and access tokens with its
/// algorithm, from the key set's `jwtKeys`.
public struct TokenSigningKey: Sendable {
    /// The RFC 7638 thumbprint of the public key; tokens name it in `kid`.
    public let id: String
    public let publicKey: TokenPublicKey
    let privateKey: TokenPrivateKey
    public let createdAt: Date

    public var algorithm: TokenSigningAlgorithm { publicKey.algorithm }
}

/// The keys a tenant publishes in its JWKS, and the one of each algorithm that signs now.
public struct TokenSigningKeySet: Sendable {
    /// Oldest first; of a tenant's first keys, the ES256 one first.
    public let published: [TokenSigningKey]
    /// The private keys of `published`, each under its `kid`: they sign and verify the tenant's
    /// tokens (`TenantJWT`).
    let jwtKeys: JWTKeyCollection
    private let signing: [TokenSigningAlgorithm: TokenSigningKey]

    init(published: [TokenSigningKey], jwtKeys: JWTKeyCollection, at date: Date) {
        self.published = published
        self.jwtKeys = jwtKeys
        signing = Dictionary(grouping: published, by: \.algorithm).compactMapValues { TokenSigningKeys.current(of: $0, at: date) }
    }

    public func key(id: String) -> TokenSigningKey? { published.first { $0.id == id } }

    /// The key that signs tokens of `algorithm` now.
    public func current(_ algorithm: TokenSigningAlgorithm) throws -> TokenSigningKey {
        guard let key = signing[algorithm] else { throw StorageError.corrupt("no \(algorithm.rawValue) token signing key") }
        return key
    }
}

/// Hands out each tenant's token-signing keys: one sequence of ES256 keys and one of RS256
/// keys (2048-bit RSA), each rotated on its own by the same schedule. A tenant's first keys are
/// created on first use — by whichever node asks first; the others then read them — and sealed
/// under the master key. Keys are cached in memory for a minute, so issuing a token does not
/// read the database.
///
/// Rotation follows `KeyRotationSchedule`, checked whenever the keys are read from the database
/// (at most once a minute per tenant and node), so no background task is needed: a new key is
/// added beside the current one of its algorithm when that is `rotationAge` old, published at
/// once but signing only once it has been published for `activationDelay`, the time relying
/// parties may cache the JWKS: no one ever receives a token whose key they cannot yet find. The
/// old key is retired from the JWKS once every token it signed has expired.
///
/// ```swift
/// let keys = try await server.tokenSigningKeys.keySet(for: tenant)
/// let key = try keys.current(.rs256)
/// let jwt = try await keys.sign(claims, type: TokenIssuer.idTokenType, with: key)
/// ```
public final class TokenSigningKeys: Sendable {
    /// How long a tenant's keys are served from memory before they are read again, so that a
    /// key added or retired on another node is seen here within this time.
    static let cacheLifetime: TimeInterval = 60
    /// How long a new key is published before it signs: the JWKS `max-age`.
    static let activationDelay: TimeInterval = 300

    private struct Entry {
        let published: [TokenSigningKey]
        let jwtKeys: JWTKeyCollection
        let loadedAt: Date
    }

    /// Where the keys are kept.
    private let store: any TokenSigningKeyStore
    private let sealer: SecretSealer
    private let now: @Sendable () -> Date
    private let schedule: KeyRotationSchedule
    private let cache = Mutex<[String: Entry]>([:])

    init(store: any TokenSigningKeyStore, sealer: SecretSealer,
         now: @escaping @Sendable () -> Date, rotationAge: TimeInterval = KeyRotationSchedule.defaultRotationAge) {
        self.store = store
        self.sealer = sealer
        self.now = now
        self.schedule = KeyRotationSchedule(rotationAge: rotationAge)
    }

    /// The tenant's published keys and its current one, creating, adding and retiring keys as
    /// the schedule says.
    public func keySet(for tenant: Tenant) async throws -> TokenSigningKeySet {
        let date = now()
        if let entry = cache.withLock({ $0[tenant.id] }),
           date >= entry.loadedAt, date.timeIntervalSince(entry.loadedAt) < Self.cacheLifetime {
            return TokenSigningKeySet(published: entry.published, jwtKeys: entry.jwtKeys, at: date)
        }
        var stored = try await store.publishedKeys(tenantID: tenant.id)
        if schedule.isDue(stored, at: date) { stored = try await rotate(tenant, stored, at: date) }
        let keys = try stored.map(open)
        let jwtKeys = JWTKeyCollection()
        for key in keys { try await key.privateKey.add(to: jwtKeys, kid: key.id) }
        cache.withLock { $0[tenant.id] = Entry(published: keys, jwtKeys: jwtKeys, loadedAt: date) }
        // Chosen on every call, not once per load: a key starts signing on time on every node.
        return TokenSigningKeySet(published: keys, jwtKeys: jwtKeys, at: date)
    }

    /// Every key the tenant has had, retired ones included, oldest first: what verifies a device
    /// certificate, and so an approval receipt, signed before its key was retired. Never for
    /// accepting tokens: a retired key's tokens have all expired.
    func archive(for tenant: Tenant) async throws -> [StoredTokenSigningKey] {
        // The tenant's first keys are made on first use, here as at /jwks.
        _ = try await keySet(for: tenant)
        return try await store.everyKey(tenantID: tenant.id)
    }

    /// Of `keys` (one algorithm's, oldest first), the newest published for at least
    /// `activationDelay`. A tenant's very first key of an algorithm signs at once: no token of
    /// that algorithm was issued before, and a relying party meeting an unknown `kid` reads the
    /// JWKS again.
    static func current(of keys: [TokenSigningKey], at date: Date) -> TokenSigningKey? {
        keys.last { date.timeIntervalSince($0.createdAt) >= activationDelay } ?? keys.first
    }

    /// Adds the keys and retires those the schedule asks for, unless another node did
    /// meanwhile; returns the published keys. `stored` is what was read before the lock.
    private func rotate(_ tenant: Tenant, _ stored: [StoredTokenSigningKey], at date: Date) async throws -> [StoredTokenSigningKey] {
        // Made before the lock is taken: finding an RSA key takes a while, and the lock holds up
        // the tenant's other writers (on SQLite, every writer). A key another node beat us to
        // is thrown away unused.
        let fresh = try TokenSigningAlgorithm.allCases
            .filter { schedule.needsNewKey(stored.of($0), at: date) }
            .map(TokenPrivateKey.generate)
        // Decided under the lock, from the keys published then.
        return try await store.rotate(tenantID: tenant.id, at: date) { [self] underLock in
            var published = underLock
            var added: [StoredTokenSigningKey] = []
            var spare = fresh
            for algorithm in TokenSigningAlgorithm.allCases where schedule.needsNewKey(published.of(algorithm), at: date) {
                let privateKey = try spare.firstIndex { $0.algorithm == algorithm }.map { spare.remove(at: $0) }
                    ?? TokenPrivateKey.generate(algorithm)
                let publicKey = try privateKey.publicKey
                let key = StoredTokenSigningKey(
                    id: publicKey.thumbprint, tenantID: tenant.id,
                    sealedKey: try sealer.seal(privateKey.sealable, context: Self.sealingContext(tenant.id, publicKey.thumbprint)),
                    publicKey: publicKey, createdAt: date, retiredAt: nil)
                added.append(key)
                published.append(key)
            }
            let retiring = Set(TokenSigningAlgorithm.allCases.flatMap { schedule.retirable(published.of($0), at: date) }.map(\.id))
            return TokenSigningKeyRotation(added: added, retired: retiring)
        }
    }

    private func open(_ stored: StoredTokenSigningKey) throws -> TokenSigningKey {
        let raw = try sealer.open(stored.sealedKey, context: Self.sealingContext(stored.tenantID, stored.id))
        let privateKey = try TokenPrivateKey(algorithm: stored.algorithm, opening: raw)
        guard try privateKey.publicKey == stored.publicKey else {
            throw StorageError.corrupt("token signing key \(stored.id) does not match its public key")
        }
        return TokenSigningKey(id: stored.id, publicKey: stored.publicKey, privateKey: privateKey, createdAt: stored.createdAt)
    }

    /// Names the row a sealed key belongs to, so that it opens nowhere else.
    static func sealingContext(_ tenantID: String, _ keyID: String) -> String {
        "token-signing-key:\(tenantID):\(keyID)"
    }
}
