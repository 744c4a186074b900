import Foundation
import Synchronization

/// The answers this node gave, by request (RFC 5080 §2.2.2): a request is a duplicate when it has
/// the source address and port, Identifier and Request Authenticator of one seen before. A
/// duplicate of a request still being answered is dropped (the answer is on its way); one of a
/// request answered is sent the same answer again, never acted on twice. An answer is kept for
/// the client's wait plus its retransmission window, at least, so that a gateway's last retry
/// still finds it.
final class RADIUSDuplicateCache: Sendable {
    struct Key: Hashable, Sendable {
        let source: String
        let identifier: UInt8
        let authenticator: [UInt8]
    }

    enum Entry: Sendable {
        case answering
        case answered([UInt8])
    }

    enum Seen: Sendable, Equatable {
        /// First sight: the caller answers it and calls `answered`.
        case new
        case inProgress
        case answered([UInt8])
    }

    /// The most requests remembered; at it, the expired ones go, and the oldest half too when
    /// that leaves more than three quarters.
    let capacity: Int
    private let state = Mutex<[Key: (entry: Entry, until: ContinuousClock.Instant)]>([:])

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// Marks `key` as being answered unless it was seen, for at most `keep`.
    func see(_ key: Key, keep: Duration) -> Seen {
        let now = ContinuousClock.now
        return state.withLock { entries in
            if let found = entries[key], found.until > now {
                switch found.entry {
                case .answering: return .inProgress
                case .answered(let answer): return .answered(answer)
                }
            }
            if entries.count >= capacity {
                // Expired answers go; if that frees less than a quarter, the newest half stays.
                // Either way the next clean-up is at least a quarter of the capacity away, so its
                // cost is spread over as many requests, not paid by each one at the limit.
                entries = entries.filter { $0.value.until > now }
                if entries.count > capacity * 3 / 4 {
                    let kept = entries.sorted { $0.value.until > $1.value.until }.prefix(capacity / 2)
                    entries = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
                }
            }
            entries[key] = (.answering, now + keep)
            return .new
        }
    }

    /// Keeps the answer to `key` (nil: it was dropped, and a retransmission is looked at afresh).
    func answered(_ key: Key, with answer: [UInt8]?, keep: Duration) {
        let now = ContinuousClock.now
        state.withLock { entries in
            if let answer {
                entries[key] = (.answered(answer), now + keep)
            } else {
                entries[key] = nil
            }
        }
    }

    var count: Int { state.withLock { $0.count } }
}
