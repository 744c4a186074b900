import Synchronization
import Testing
@testable import CountersignServer

/// The one sweep that bounds PostgreSQL lease waits: it cancels the child that still waits past
/// its deadline, and leaves alone one that has its connection or has returned.
@Suite("Lease deadlines")
struct LeaseDeadlinesTests {
    @Test("a child still waiting at its deadline is cancelled; the wait is marked over")
    func waitingPastTheDeadlineIsCancelled() async throws {
        let deadlines = LeaseDeadlines()
        let ticket = deadlines.begin(.seconds(3600))
        let attached = AsyncStream<Void>.makeStream()
        let waiting = Task {
            try deadlines.attach(ticket)
            defer { deadlines.detach(ticket) }
            attached.continuation.yield()
            try await Task.sleep(for: .seconds(30))  // stands for the pool's lease
        }
        for await _ in attached.stream { break }
        deadlines.sweep(at: .now)
        #expect(!deadlines.expired(ticket), "not before its deadline")
        deadlines.sweep(at: .now + .seconds(7200))
        #expect(deadlines.expired(ticket) && !deadlines.wasLeased(ticket))
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(throws: StorageError.self) { try deadlines.leased(ticket) }
        deadlines.end(ticket)
    }

    @Test("a child that got its connection, or that has not attached, is never cancelled; a late one gives up at once")
    func leasedAndLateChildren() async throws {
        let deadlines = LeaseDeadlines()
        let leased = deadlines.begin(.milliseconds(10))
        let connected = AsyncStream<Void>.makeStream()
        let working = Task {
            try deadlines.attach(leased)
            defer { deadlines.detach(leased) }
            try deadlines.leased(leased)
            connected.continuation.yield()
            try await Task.sleep(for: .milliseconds(200))  // a statement running past the wait
            return Task.isCancelled
        }
        for await _ in connected.stream { break }
        deadlines.sweep(at: .now + .seconds(1))
        #expect(try await working.value == false)
        #expect(deadlines.wasLeased(leased) && !deadlines.expired(leased))
        deadlines.end(leased)

        let late = deadlines.begin(.milliseconds(10))
        deadlines.sweep(at: .now + .seconds(1))
        #expect(throws: StorageError.self) { try deadlines.attach(late) }
        deadlines.end(late)
        #expect(!deadlines.expired(late), "ended tickets are forgotten")
    }

    @Test("a caller whose leased connection has closed is given up once, after the grace; an open connection's never")
    func lostConnectionGivesUpTheCaller() async throws {
        let deadlines = LeaseDeadlines()
        let givenUp = Mutex(0)
        let closed = Mutex(false)
        let ticket = deadlines.begin(.seconds(1), onLostConnection: { givenUp.withLock { $0 += 1 } })
        try deadlines.attach(ticket)
        try deadlines.leased(ticket, connectionClosed: { closed.withLock { $0 } })
        deadlines.detach(ticket)
        let start = ContinuousClock.now
        deadlines.sweep(at: start + .seconds(60))
        #expect(givenUp.withLock { $0 } == 0, "the connection is open: a long statement is not given up")
        closed.withLock { $0 = true }
        deadlines.sweep(at: start + .seconds(61))
        deadlines.sweep(at: start + .seconds(61) + LeaseDeadlines.lostConnectionGrace / 2)
        #expect(givenUp.withLock { $0 } == 0, "within the grace, the statement may still fail by itself")
        deadlines.sweep(at: start + .seconds(61) + LeaseDeadlines.lostConnectionGrace)
        deadlines.sweep(at: start + .seconds(70))
        #expect(givenUp.withLock { $0 } == 1)
        #expect(!deadlines.expired(ticket), "a lease that was had is not an expired wait")
        deadlines.end(ticket)
    }
}
