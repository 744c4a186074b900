import CountersignCore
import Foundation

/// The provider tokens APNs has seen, with Apple's rules for their age and their turnover.
///
/// Apple verifies a token once and then recognises it; so does this: the signature check (an
/// ECDSA verification) runs once per distinct JWT string, and a benchmark pushing tens of
/// thousands of notifications under one token pays one dictionary lookup per request.
struct ProviderTokenRegistry: Sendable {
    /// The time-independent facts about one JWT string.
    private enum Verification: Sendable {
        case invalid
        case verified(keyID: String, issuedAt: Int64)
    }

    /// Apple refuses tokens older than an hour…
    static let maximumAge: Int64 = 3600
    /// …and a new token for a key within 20 minutes of the last one, whichever connection,
    /// server or restart of the provider presents it (`TooManyProviderTokenUpdates`): a provider
    /// must keep one token per key for all its servers, not sign one per server or per start.
    static let minimumRefreshInterval: Int64 = 1200

    /// Whether a verified token was let in as its key's current token; decided the first time
    /// it is presented while unexpired, and kept.
    private enum Admission: Sendable {
        case admitted
        case tooManyUpdates
    }

    private struct Entry: Sendable {
        var verification: Verification
        var admission: Admission?
    }

    /// The provider keys by key id.
    private let keys: [String: APNsEmulator.APNsProviderKey]
    private var entries: [String: Entry] = [:]
    /// The `iat` of the last token admitted for each key id.
    private var latestIssuedAt: [String: Int64] = [:]
    /// Every distinct bearer value, in the order first seen.
    private(set) var seen: [String] = []

    init(keys: [String: APNsEmulator.APNsProviderKey]) {
        self.keys = keys
    }

    /// Applies Apple's rules to `token` at `now`; nil means it may be used.
    ///
    /// A token seen before costs one dictionary lookup. A new one is verified here, under the
    /// emulator's lock; that is an ECDSA verification once per distinct token, and every
    /// connection is served by one event loop thread anyway.
    mutating func admit(_ token: String, now: Date) -> APNsRejection? {
        let entry: Entry
        if let known = entries[token] {
            entry = known
        } else {
            entry = Entry(verification: Self.verify(token, keys: keys))
            entries[token] = entry
            seen.append(token)
        }
        guard case .verified(let keyID, let issuedAt) = entry.verification else { return .invalidProviderToken }
        if Int64(now.timeIntervalSince1970.rounded(.down)) - issuedAt > Self.maximumAge { return .expiredProviderToken }
        if let admission = entry.admission {
            return admission == .admitted ? nil : .tooManyProviderTokenUpdates
        }
        let admission: Admission
        if let previous = latestIssuedAt[keyID], issuedAt - previous < Self.minimumRefreshInterval {
            admission = .tooManyUpdates
        } else {
            latestIssuedAt[keyID] = issuedAt
            admission = .admitted
        }
        entries[token]?.admission = admission
        return admission == .admitted ? nil : .tooManyProviderTokenUpdates
    }

    /// Checks `token`'s structure, key, signature and claims against `keys` (by key id).
    private static func verify(_ token: String, keys: [String: APNsEmulator.APNsProviderKey]) -> Verification {
        guard let jws = try? CompactJWS(parsing: token),
              let keyID = jws.keyID, let key = keys[keyID],
              jws.isValid(for: key.publicKey),
              let claims = try? jws.payloadJSON(),
              claims["iss"]?.stringValue == key.teamID,
              let issuedAt = claims["iat"]?.integerValue else { return .invalid }
        return .verified(keyID: keyID, issuedAt: issuedAt)
    }
}
