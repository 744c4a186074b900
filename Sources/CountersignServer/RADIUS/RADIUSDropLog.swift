import Foundation
import Synchronization

/// How often dropped packets reach the log and the audit log: once a minute per reason and
/// source address, with the number dropped since, so that a flood of forged packets cannot fill
/// either. Every drop is counted in `/metrics` regardless.
final class RADIUSDropLog: Sendable {
    private struct Key: Hashable {
        let reason: String
        let source: [UInt8]
    }

    private let interval: Duration
    private let state = Mutex<[Key: (count: Int, last: ContinuousClock.Instant?)]>([:])
    /// Sources remembered at most; past it, the table starts again.
    private let capacity = 10_000

    init(interval: Duration = .seconds(60)) {
        self.interval = interval
    }

    /// The drops of `reason` from `source` since the last one reported, this one included, when
    /// this one is to be reported; nil when it is only counted.
    func count(reason: String, source: [UInt8]) -> Int? {
        let now = ContinuousClock.now
        let key = Key(reason: reason, source: source)
        return state.withLock { entries in
            if entries.count >= capacity, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            var entry = entries[key] ?? (0, nil)
            entry.count += 1
            if let last = entry.last, now - last < interval {
                entries[key] = entry
                return nil
            }
            entries[key] = (0, now)
            return entry.count
        }
    }
}
