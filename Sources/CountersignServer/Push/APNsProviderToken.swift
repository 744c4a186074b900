import CountersignCore
import Foundation
import JWTKit
import Synchronization

/// The provider token (an ES256 JWT with `kid`, `iss` = team id, `iat`) that authenticates
/// token-based APNs requests. Apple refuses a token older than an hour
/// (`ExpiredProviderToken`) and a key whose token changes more often than every 20 minutes
/// (`TooManyProviderTokenUpdates`), so one token per key is shared by every request, every node
/// and every start (`APNsProviderTokenStore`), and renewed once it is 50 minutes old — or sooner
/// if APNs calls it expired, but never before it is 20 minutes old. Renewals are a conditional
/// replace: of nodes renewing at once, one writes and the others use what it wrote.
final class APNsProviderToken: Sendable {
    static let renewalAge: TimeInterval = 50 * 60
    static let minimumAge: TimeInterval = 20 * 60

    private let key: APNsSigningKey
    private let fingerprint: String
    private let store: any APNsProviderTokenStore
    /// The token in use here, so that a push reads no database while it is fresh.
    private let current = Mutex<StoredProviderToken?>(nil)
    /// One renewal at a time on this node; the others wait for its result.
    private let renewal = AsyncLock()

    init(key: APNsSigningKey, store: any APNsProviderTokenStore) {
        self.key = key
        self.fingerprint = key.fingerprint
        self.store = store
    }

    /// The token to send with at `date`: the shared one while it is younger than `renewalAge`,
    /// else a new one.
    func token(at date: Date) async throws -> String {
        if let fresh = current.withLock({ $0 }), Self.isFresh(fresh, at: date) { return fresh.jwt }
        return try await renewal.withLock {
            if let fresh = current.withLock({ $0 }), Self.isFresh(fresh, at: date) { return fresh.jwt }
            let shared = try await store.current(for: fingerprint)
            if let shared, Self.isFresh(shared, at: date) { return adopt(shared) }
            return try await replace(shared, at: date)
        }
    }

    /// After APNs answered `ExpiredProviderToken` to `rejected`: true if a new token was made
    /// (or another request or node already made one), false if the current one is too young to
    /// replace.
    func renew(after rejected: String, at date: Date) async throws -> Bool {
        try await renewal.withLock {
            let shared = try await store.current(for: fingerprint)
            guard let shared, shared.jwt == rejected else {
                if let shared { _ = adopt(shared) }
                return true
            }
            guard date.timeIntervalSince(shared.issuedAt) >= Self.minimumAge else { return false }
            _ = try await replace(shared, at: date)
            return true
        }
    }

    /// How long until the token in use may be replaced; zero when it already may.
    func timeUntilReplaceable(at date: Date) -> TimeInterval {
        guard let token = current.withLock({ $0 }) else { return 0 }
        return max(0, Self.minimumAge - date.timeIntervalSince(token.issuedAt))
    }

    /// Young enough to send with. A token another node dated a little ahead of this node's
    /// clock is still fresh: replacing it would only change the key's token again.
    private static func isFresh(_ token: StoredProviderToken, at date: Date) -> Bool {
        let age = date.timeIntervalSince(token.issuedAt)
        return age > -clockSkew && age < renewalAge
    }

    /// How far apart the clocks of two nodes may be.
    static let clockSkew: TimeInterval = 300

    private func adopt(_ token: StoredProviderToken) -> String {
        current.withLock { $0 = token }
        return token.jwt
    }

    /// Signs a token and stores it in place of `shared`; if another node got there first, uses
    /// the token it stored.
    private func replace(_ shared: StoredProviderToken?, at date: Date) async throws -> String {
        let made = try await make(at: date)
        if try await store.replace(shared, with: made, for: fingerprint) { return adopt(made) }
        guard let winner = try await store.current(for: fingerprint) else {
            throw StorageError.unavailable("the APNs provider token was removed while it was being renewed")
        }
        return adopt(winner)
    }

    /// Signed once per renewal, so the key collection is made for it and dropped.
    private func make(at date: Date) async throws -> StoredProviderToken {
        let issuedAt = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
        let claims = JWTClaims(["iss": .string(key.teamID), "iat": .integer(Int64(issuedAt.timeIntervalSince1970))])
        let keyID = JWKIdentifier(string: key.keyID)
        let keys = await JWTKeyCollection().add(ecdsa: try ES256PrivateKey(backing: key.key), kid: keyID)
        return StoredProviderToken(jwt: try await keys.sign(claims, kid: keyID), issuedAt: issuedAt)
    }
}
