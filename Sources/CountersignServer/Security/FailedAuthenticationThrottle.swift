import Foundation
import Synchronization

/// Counts failed authentications — a wrong client secret or assertion, an unknown or revoked
/// admin key — per source address and per credential, over a sliding minute. The secrets are 256-bit, so this is not about guessing: it keeps a flood of
/// failures from costing lookups and hashing, and from filling logs and metrics.
///
/// - A source that failed `limit` times within the minute is refused anything (429 `slow_down`
///   with `Retry-After`) until its oldest failure of the minute ages out.
/// - A credential (a client, an admin key) that failed `limit` times is not locked: a request
///   with the right secret still passes, so that nobody can lock a client out by failing in its
///   name; a wrong one is answered 429 instead of 401 until the window frees.
///
/// Counted per node, in memory: a node forgets on restart, and each node of several counts what
/// it sees. At most `trackedKeys` sources and credentials are remembered at once; past that,
/// the expired are dropped, and if too many are still live, all are.
public final class FailedAuthenticationThrottle: Sendable {
    /// Failures allowed per source or credential within `window`; 0 switches the throttle off.
    public static let defaultLimit = 30
    static let window: TimeInterval = 60
    static let trackedKeys = 100_000

    private let limit: Int
    /// The sliding window counts are kept over (`SignInPushLimits` counts over ten minutes).
    private let window: TimeInterval
    private let trackedKeys: Int
    private let now: @Sendable () -> Date
    /// Failure times per key, oldest first, at most `limit` of them.
    private let failures = Mutex<[String: [Date]]>([:])

    init(limit: Int, window: TimeInterval = FailedAuthenticationThrottle.window,
         trackedKeys: Int = FailedAuthenticationThrottle.trackedKeys, now: @escaping @Sendable () -> Date) {
        self.limit = limit
        self.window = window
        self.trackedKeys = trackedKeys
        self.now = now
    }

    static func source(_ address: String) -> String { "source:\(address)" }
    static func client(tenantID: String, clientID: String) -> String { "client:\(tenantID):\(clientID)" }
    static func adminKey(_ id: String) -> String { "admin-key:\(id)" }

    /// Whole seconds until `key` has room for another failure; nil when it has room now.
    func retryAfter(_ key: String) -> Int? {
        guard limit > 0 else { return nil }
        let date = now()
        return failures.withLock { failures in
            guard let times = failures[key], times.count >= limit,
                  let oldest = times.first, date.timeIntervalSince(oldest) < window else { return nil }
            return max(1, Int((window - date.timeIntervalSince(oldest)).rounded(.up)))
        }
    }

    func recordFailure(_ key: String) {
        guard limit > 0 else { return }
        let date = now()
        failures.withLock { failures in
            var times = (failures[key] ?? []).filter { date.timeIntervalSince($0) < window }
            times.append(date)
            if times.count > limit { times.removeFirst(times.count - limit) }
            failures[key] = times
            if failures.count > trackedKeys {
                failures = failures.filter { _, times in times.last.map { date.timeIntervalSince($0) < window } ?? false }
                // Still full of live counts (failures from that many places within a minute):
                // forgetting them all keeps each failure's cost constant, where pruning again at
                // every failure would make the flood itself the expensive part.
                if failures.count > trackedKeys { failures.removeAll(keepingCapacity: true) }
            }
        }
    }
}
