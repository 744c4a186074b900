import Foundation
import Synchronization

/// Lets housekeeping run at most once per interval, done by whichever request asks first
/// once the interval has passed (`now` is the server's clock, so tests can move it).
final class PeriodicSchedule: Sendable {
    private let interval: TimeInterval
    private let last = Mutex<Date>(.distantPast)

    init(every interval: TimeInterval) {
        self.interval = interval
    }

    /// True once per interval: the caller that gets true does the work.
    func isDue(at now: Date) -> Bool {
        last.withLock { last in
            guard now.timeIntervalSince(last) > interval else { return false }
            last = now
            return true
        }
    }
}
