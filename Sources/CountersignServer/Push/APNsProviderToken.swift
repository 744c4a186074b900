import CountersignCore
import Crypto
import Foundation
import Synchronization

/// The provider token (an ES256 JWT with `kid`, `iss` = team id, `iat`) that authenticates
/// token-based APNs requests. Apple refuses a token older than an hour
/// (`ExpiredProviderToken`) and one renewed more often than every 20 minutes
/// (`TooManyProviderTokenUpdates`), so one token is shared by every request and renewed once it
/// is 50 minutes old — or sooner if APNs calls it expired, but never before it is 20 minutes old.
final class APNsProviderToken: Sendable {
    static let renewalAge: TimeInterval = 50 * 60
    static let minimumAge: TimeInterval = 20 * 60

    private let key: APNsSigningKey
    private let current = Mutex<(jwt: String, issuedAt: Date)?>(nil)

    init(key: APNsSigningKey) {
        self.key = key
    }

    /// The token to send with at `date`, made anew if there is none or it is due for renewal.
    func token(at date: Date) throws -> String {
        try current.withLock { current in
            if let current, date.timeIntervalSince(current.issuedAt) < Self.renewalAge { return current.jwt }
            let made = try make(at: date)
            current = made
            return made.jwt
        }
    }

    /// After APNs answered `ExpiredProviderToken` to `rejected`: true if a new token was made
    /// (or another request already made one), false if the current one is too young to replace.
    func renew(after rejected: String, at date: Date) throws -> Bool {
        try current.withLock { current in
            guard let existing = current, existing.jwt == rejected else { return true }
            guard date.timeIntervalSince(existing.issuedAt) >= Self.minimumAge else { return false }
            current = try make(at: date)
            return true
        }
    }

    private func make(at date: Date) throws -> (jwt: String, issuedAt: Date) {
        let issuedAt = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
        let claims = JSONValue.object(["iss": .string(key.teamID), "iat": .integer(Int64(issuedAt.timeIntervalSince1970))])
        let jws = try CompactJWS.sign(header: ["kid": .string(key.keyID)], payload: claims.canonicalData, signer: key.key)
        return (jws.serialized, issuedAt)
    }
}
