import Logging
import Synchronization

/// A dispatcher's read of its outbox fails every round for as long as its cause lasts (the
/// database gone): logged at `error` once when the failures begin, at `debug` while they go
/// on, and at `notice` when the read works again, so that an outage is one alert and not three
/// error lines a second.
///
/// Reads overlap (the push dispatcher runs several workers): a read begun before the first
/// failure of a streak that answers after it says nothing of the database now, and does not
/// end the streak. Each read takes its number from `attempt()` before it begins; `reading(_:)`
/// does all of it for one read.
final class FailureStreak: Sendable {
    /// What failed, as the log says it: `the push outbox could not be read`.
    let message: String
    private let state = Mutex(State())

    private struct State {
        var failures = 0
        /// The number the last read took.
        var attempts = 0
        /// The number of the read whose failure began the streak.
        var firstFailed = 0
    }

    init(_ message: String) {
        self.message = message
    }

    /// Runs `read` as one attempt of the streak: its value, or nil when it threw (logged as the
    /// streak says).
    ///
    /// ```swift
    /// guard let claimed = await readFailures.reading(logger: logger, { try await store.claim(…) }) else { return 0 }
    /// ```
    func reading<Value>(logger: Logger, _ read: () async throws -> Value) async -> Value? {
        let attempt = attempt()
        do {
            let value = try await read()
            succeeded(attempt: attempt, logger: logger)
            return value
        } catch {
            failed(error, attempt: attempt, logger: logger)
            return nil
        }
    }

    /// The number of a read about to begin, for `failed` or `succeeded`.
    func attempt() -> Int {
        state.withLock { state in
            state.attempts += 1
            return state.attempts
        }
    }

    func failed(_ error: any Error, attempt: Int, logger: Logger) {
        let count = state.withLock { state in
            state.failures += 1
            if state.failures == 1 { state.firstFailed = attempt }
            return state.failures
        }
        let metadata: Logger.Metadata = ["error": "\(error)"]
        if count == 1 {
            logger.error("\(message)", metadata: metadata)
        } else {
            logger.debug("\(message) (again, \(count) rounds in a row)", metadata: metadata)
        }
    }

    func succeeded(attempt: Int, logger: Logger) {
        let count = state.withLock { state -> Int in
            guard state.failures > 0, attempt > state.firstFailed else { return 0 }
            defer { state.failures = 0 }
            return state.failures
        }
        if count > 0 { logger.notice("\(message) for \(count) rounds; it works again") }
    }
}
