import Testing
@testable import CountersignServer

/// An outage is one error line and one notice, even when reads overlap.
@Suite("Failure streaks")
struct FailureStreakTests {
    struct Unreachable: Error {}

    @Test("a read begun before the failures began does not end them when it answers; a later one does")
    func overlappingReads() {
        let capture = LogCapture()
        let logger = capture.logger()
        let streak = FailureStreak("the push outbox could not be read")
        let before = streak.attempt()        // in flight as the database goes
        let first = streak.attempt()
        streak.failed(Unreachable(), attempt: first, logger: logger)
        streak.succeeded(attempt: before, logger: logger)
        let second = streak.attempt()
        streak.failed(Unreachable(), attempt: second, logger: logger)
        #expect(capture.logged(atLeast: .error).count == 1, "one error line for the outage")
        #expect(capture.logged(atLeast: .notice).count == 1, "and no notice of a recovery that was not")

        let after = streak.attempt()
        streak.succeeded(attempt: after, logger: logger)
        let notices = capture.logged(atLeast: .notice).filter { $0.level == .notice }
        #expect(notices.count == 1)
        #expect(notices.first?.message.contains("for 2 rounds; it works again") == true)

        // A new outage is a new error line.
        let again = streak.attempt()
        streak.failed(Unreachable(), attempt: again, logger: logger)
        #expect(capture.logged(atLeast: .error).count == 2)
    }
}
