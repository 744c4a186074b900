import Logging
import Synchronization

/// A dispatcher's read of its outbox fails every round for as long as its cause lasts (the
/// database gone): logged at `error` once when the failures begin, at `debug` while they go
/// on, and at `notice` when the read works again, so that an outage is one alert and not three
/// error lines a second.
final class FailureStreak: Sendable {
    /// What failed, as the log says it: `the push outbox could not be read`.
    let message: String
    private let failures = Mutex(0)

    init(_ message: String) {
        self.message = message
    }

    func failed(_ error: any Error, logger: Logger) {
        let count = failures.withLock { count in
            count += 1
            return count
        }
        let metadata: Logger.Metadata = ["error": "\(error)"]
        if count == 1 {
            logger.error("\(message)", metadata: metadata)
        } else {
            logger.debug("\(message) (again, \(count) rounds in a row)", metadata: metadata)
        }
    }

    func succeeded(logger: Logger) {
        let count = failures.withLock { count in
            defer { count = 0 }
            return count
        }
        if count > 0 { logger.notice("\(message) for \(count) rounds; it works again") }
    }
}
