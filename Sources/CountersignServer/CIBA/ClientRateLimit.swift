import Foundation
import Synchronization

/// The per-client limit of `bc-authorize`: at most the client's `backchannel_requests_per_minute`
/// (or the tenant's `client_requests_per_minute`, default 600; 0 for no limit) in any 60
/// seconds, across every node. It protects the users and the push providers from a relying
/// party gone wrong, and the server from one client starving the others.
///
/// Checked right after client authentication, before any other check stores anything (a
/// request object's `jti`, a wrong user code): a refused request changes nothing. Only the
/// requests let through are counted, so a client that ignores `Retry-After` still gets its
/// limit's worth of requests through, and a refused request never prolongs the wait.
///
/// A request let through costs one statement, the conditional upsert: the previous minute's
/// count, which the capacity needs, no longer changes once that minute is over, so each node
/// reads it once per client and minute (`SettledMinutes`). The current count is read only to
/// tell a refused client when to retry.
struct ClientRateLimit: Sendable {
    let store: any ClientRateLimitStore
    let metrics: ServerMetrics
    let now: @Sendable () -> Date
    let settled = SettledMinutes()

    /// Counts the request, or throws `clientRateLimited` with the seconds until one fits.
    func admit(_ client: Client, policy: AuthenticationPolicy) async throws {
        let limit = client.backchannelRequestsPerMinute ?? policy.clientRequestsPerMinute
        guard limit > 0 else { return }
        let minute = SlidingMinute(at: now())
        var counts: (previous: Int64, current: Int64)?
        let previous: Int64
        if let known = settled.count(clientID: client.id, minuteStart: minute.previousStart) {
            previous = known
        } else {
            let read = try await store.requestCounts(
                clientID: client.id, previousMinute: minute.previousStart, currentMinute: minute.currentStart)
            counts = read
            previous = read.previous
            if minute.elapsed >= SettledMinutes.settling {
                settled.record(read.previous, clientID: client.id, minuteStart: minute.previousStart)
            }
        }
        let capacity = minute.capacity(limit: limit, previous: previous)
        if counts.map({ $0.current < capacity }) ?? true,
           try await store.countRequest(clientID: client.id, minute: minute.currentStart, capacity: capacity) {
            return
        }
        metrics.bcAuthorizeRateLimited(limit: "client")
        var current = counts?.current
        if current == nil {
            current = try await store.requestCounts(
                clientID: client.id, previousMinute: minute.previousStart, currentMinute: minute.currentStart).current
        }
        // Another node may have taken the last place since the counts were read.
        throw BackchannelAuthenticationError.clientRateLimited(
            perMinute: limit, retryAfter: minute.retryAfter(limit: limit, previous: previous, current: max(current ?? 0, capacity)))
    }
}

/// The request counts of minutes that are over, per client, as this node read them: a count
/// read at least `settling` into the next minute is final (no node counts into a minute that
/// far behind its clock). Only the latest minute of each client is kept, so the map holds one
/// entry per client that made requests, dropped by `record` once it is older than a minute.
final class SettledMinutes: Sendable {
    /// How far into the next minute a count is taken as final.
    static let settling: Int64 = 2_000

    private let counts = Mutex<[String: (minuteStart: Date, count: Int64)]>([:])

    func count(clientID: String, minuteStart: Date) -> Int64? {
        counts.withLock { counts in counts[clientID].flatMap { $0.minuteStart == minuteStart ? $0.count : nil } }
    }

    func record(_ count: Int64, clientID: String, minuteStart: Date) {
        counts.withLock { counts in
            if counts.count >= 10_000 { counts = counts.filter { $0.value.minuteStart >= minuteStart } }
            counts[clientID] = (minuteStart, count)
        }
    }
}

/// The sliding-window estimate of the requests in the last 60 seconds, from two fixed minutes:
/// all of the current minute's, and the previous minute's weighted by the share of it that is
/// still less than 60 seconds ago, `previous × (1 − elapsed/60) + current`. Two counters per
/// client instead of one row per request; the estimate assumes the previous minute's requests
/// were spread evenly. Arithmetic is in whole milliseconds, so no rounding lets one more through.
struct SlidingMinute: Equatable {
    static let length: Int64 = 60_000

    /// The first millisecond of the current minute, since 1970.
    let currentMillisecond: Int64
    /// Milliseconds since it began: 0 to 59,999.
    let elapsed: Int64

    init(at date: Date) {
        let now = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        elapsed = ((now % Self.length) + Self.length) % Self.length
        currentMillisecond = now - elapsed
    }

    var currentStart: Date { Self.date(currentMillisecond) }
    var previousStart: Date { Self.date(currentMillisecond - Self.length) }

    /// How many requests the current minute may hold in all: a request is let through while
    /// the estimate, counting it, is at most `limit`.
    func capacity(limit: Int, previous: Int64) -> Int64 {
        Self.floorDivision(Int64(limit) * Self.length - previous * (Self.length - elapsed), Self.length)
    }

    /// Seconds until one more request fits, if none is counted meanwhile (at least 1).
    func retryAfter(limit: Int, previous: Int64, current: Int64) -> Int {
        let room = Int64(limit) - 1
        let wait: Int64
        if current <= room {
            // The previous minute's share must fall to room − current: it does within this minute.
            guard previous > 0 else { return 1 }
            let weightNeeded = Self.floorDivision((room - current) * Self.length, previous)
            wait = (Self.length - weightNeeded) - elapsed
        } else {
            // This minute is full: its count becomes the previous minute's, which must fall to room.
            let weightNeeded = Self.floorDivision(room * Self.length, current)
            wait = (Self.length - elapsed) + (Self.length - weightNeeded)
        }
        return Int(max(1, (wait + 999) / 1000))
    }

    private static func date(_ millisecond: Int64) -> Date {
        Date(timeIntervalSince1970: Double(millisecond) / 1000)
    }

    private static func floorDivision(_ dividend: Int64, _ divisor: Int64) -> Int64 {
        let quotient = dividend / divisor
        return (dividend % divisor != 0 && (dividend < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
