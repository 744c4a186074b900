import Foundation

/// When a tenant's token-signing keys change. A key signs for `rotationAge` (90 days unless
/// configured); then a new key is made. The new key is published at once and signs once it has
/// been published for `TokenSigningKeys.activationDelay`, the time relying parties may cache the
/// JWKS. The old key then signs no more, but stays published until every token it signed has
/// expired (`retirementDelay`, the longest an access or ID token lives; refresh tokens are
/// opaque and signed by no key), and is then retired from the JWKS.
///
/// Each algorithm's keys (ES256, RS256) form a sequence of their own, rotated by this one
/// schedule; `needsNewKey` and `retirable` take the keys of one algorithm.
///
/// Rotating limits what one key signs and how long a stolen key is worth anything; publishing
/// before signing and after the last signature means no relying party ever meets a token whose
/// key it cannot find.
struct KeyRotationSchedule: Sendable, Equatable {
    static let defaultRotationAge: TimeInterval = 90 * 86_400

    /// How long a key is the newest before another is made.
    let rotationAge: TimeInterval

    /// How long a key that no longer signs stays published.
    static var retirementDelay: TimeInterval {
        TimeInterval(max(TokenIssuer.accessTokenLifetime, TokenIssuer.idTokenLifetime))
    }

    /// Whether `keys` (published, oldest first) need a new key at `date`: none yet, or the
    /// newest is `rotationAge` old.
    func needsNewKey(_ keys: [StoredTokenSigningKey], at date: Date) -> Bool {
        guard let newest = keys.last else { return true }
        return date.timeIntervalSince(newest.createdAt) >= rotationAge
    }

    /// The keys of `keys` (published, oldest first) to retire at `date`: each whose successor has
    /// signed for longer than a token lives. The newest key never retires.
    func retirable(_ keys: [StoredTokenSigningKey], at date: Date) -> [StoredTokenSigningKey] {
        zip(keys, keys.dropFirst())
            .filter { date.timeIntervalSince($0.1.createdAt) >= TokenSigningKeys.activationDelay + Self.retirementDelay }
            .map(\.0)
    }

    /// Whether any algorithm's keys among `keys` (all the tenant publishes) need a new key or a
    /// retirement at `date`.
    func isDue(_ keys: [StoredTokenSigningKey], at date: Date) -> Bool {
        TokenSigningAlgorithm.allCases.contains { algorithm in
            needsNewKey(keys.of(algorithm), at: date) || !retirable(keys.of(algorithm), at: date).isEmpty
        }
    }
}
