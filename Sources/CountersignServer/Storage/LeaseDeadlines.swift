import Synchronization

/// Bounds how long statements wait for a pooled connection, with one clock for all of them.
///
/// A statement leases its connection in a child task of its caller. Rather than racing it
/// against a second child that sleeps for the whole wait (a task, and a timer that stays armed
/// for the wait even when the lease comes at once, per statement), the child registers here,
/// and a single sweep, every `resolution`, cancels the children whose wait is over; the pool
/// gives up a lease request whose task is cancelled, and the statement fails with
/// `StorageError.unavailable`.
///
/// The sweep cancels a child only while it is attached, under the lock, and every child
/// detaches itself (under the same lock) before it returns: so the sweep never touches a task
/// that has finished. Only the child is cancelled, never the caller, which may be a worker
/// that must outlive an outage.
///
/// The same sweep gives a caller up when the connection its child leased has closed and the
/// child has still not returned `lostConnectionGrace` later. The driver writes a statement to
/// its connection without waiting for the write: one written just after the connection closed
/// (a lease can be handed a connection that is closing) is dropped, and its caller would wait
/// for an answer that never comes, whatever cancels it. A closing connection fails the
/// statements it did take within moments, with their own error; the grace leaves them that.
final class LeaseDeadlines: Sendable {
    /// How often the sweep looks: a wait ends at most this much after its deadline.
    static let resolution: Duration = .milliseconds(100)
    /// How long a child whose connection has closed is left to fail by itself.
    static let lostConnectionGrace: Duration = .seconds(1)

    /// A registered wait, as its task holds it.
    struct Ticket: Sendable {
        fileprivate let id: Int
    }

    private struct Waiter {
        let deadline: ContinuousClock.Instant
        /// The child while it waits for its lease; nil before it attaches, once it has its
        /// connection, and once it has returned.
        var task: TaskReference?
        var leased = false
        var expired = false
        /// What gives the caller up once the leased connection is lost; nil once called.
        var giveUp: (@Sendable () -> Void)?
        /// Whether the leased connection has closed, once there is one.
        var connectionClosed: (@Sendable () -> Bool)?
        /// When the sweep first saw the leased connection closed.
        var closedSince: ContinuousClock.Instant?
    }

    /// The child waiting for a connection. Used only while it is attached, which is while it
    /// runs (`attach` … `detach`).
    private struct TaskReference: @unchecked Sendable {
        let task: UnsafeCurrentTask
    }

    private struct State {
        var next = 0
        var waiting: [Int: Waiter] = [:]
    }

    private let state = Mutex(State())
    private let sweeper = Mutex<Task<Void, Never>?>(nil)

    init() {}

    /// Starts the sweep; `stop()` ends it.
    func start() {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.resolution)
                self?.sweep(at: .now)
            }
        }
        sweeper.withLock { $0 = task }
    }

    func stop() {
        sweeper.withLock { $0?.cancel() }
    }

    /// A wait of at most `wait` for a connection, from now. Call `end` with the ticket before
    /// the calling function returns, whatever happens. `giveUp` is called (once, from the
    /// sweep) if the connection the child leases closes and the child has not returned
    /// `lostConnectionGrace` later.
    func begin(_ wait: Duration, onLostConnection giveUp: (@Sendable () -> Void)? = nil) -> Ticket {
        let deadline = ContinuousClock.now + wait
        return state.withLock { state in
            let id = state.next
            state.next += 1
            state.waiting[id] = Waiter(deadline: deadline, giveUp: giveUp)
            return Ticket(id: id)
        }
    }

    /// The calling task (the child that leases) waits under `ticket`, until `leased` or
    /// `detach`. Throws when the wait is already over.
    func attach(_ ticket: Ticket) throws(StorageError) {
        let reference = withUnsafeCurrentTask { $0.map(TaskReference.init) }
        let expired = state.withLock { state -> Bool in
            guard state.waiting[ticket.id]?.expired == false else { return true }
            state.waiting[ticket.id]?.task = reference
            return false
        }
        if expired { throw .unavailable("no PostgreSQL connection in time") }
    }

    /// The child is about to return: the sweep must not touch it any more.
    func detach(_ ticket: Ticket) {
        state.withLock { $0.waiting[ticket.id]?.task = nil }
    }

    /// The child got its connection: it is no longer cancelled for its wait, and from now on
    /// `connectionClosed` says whether that connection is lost. Throws when the wait ran out
    /// just before, so that no statement runs on a task the sweep has cancelled.
    func leased(_ ticket: Ticket, connectionClosed: (@Sendable () -> Bool)? = nil) throws(StorageError) {
        let expired = state.withLock { state -> Bool in
            state.waiting[ticket.id]?.task = nil
            let expired = state.waiting[ticket.id]?.expired ?? false
            if !expired {
                state.waiting[ticket.id]?.leased = true
                state.waiting[ticket.id]?.connectionClosed = connectionClosed
            }
            return expired
        }
        if expired { throw .unavailable("no PostgreSQL connection in time") }
    }

    /// Whether the wait of `ticket` ran out.
    func expired(_ ticket: Ticket) -> Bool {
        state.withLock { $0.waiting[ticket.id]?.expired ?? false }
    }

    /// Whether `ticket`'s task got a connection.
    func wasLeased(_ ticket: Ticket) -> Bool {
        state.withLock { $0.waiting[ticket.id]?.leased ?? false }
    }

    /// Takes the ticket out; the sweep no longer sees it.
    func end(_ ticket: Ticket) {
        _ = state.withLock { $0.waiting.removeValue(forKey: ticket.id) }
    }

    /// Cancels every child still waiting past its deadline, and marks every wait past it that
    /// has no lease as over (a child that has not attached yet then gives up when it does).
    /// Gives up the callers whose leased connection has been closed for `lostConnectionGrace`.
    func sweep(at now: ContinuousClock.Instant) {
        let givenUp = state.withLock { state -> [@Sendable () -> Void] in
            var givenUp: [@Sendable () -> Void] = []
            for (id, waiter) in state.waiting {
                if !waiter.leased {
                    guard !waiter.expired, waiter.deadline <= now else { continue }
                    waiter.task?.task.cancel()
                    state.waiting[id]?.task = nil
                    state.waiting[id]?.expired = true
                } else if let giveUp = waiter.giveUp, let closed = waiter.connectionClosed {
                    guard closed() else {
                        state.waiting[id]?.closedSince = nil
                        continue
                    }
                    guard let since = waiter.closedSince else {
                        state.waiting[id]?.closedSince = now
                        continue
                    }
                    if now - since >= Self.lostConnectionGrace {
                        givenUp.append(giveUp)
                        state.waiting[id]?.giveUp = nil
                    }
                }
            }
            return givenUp
        }
        for giveUp in givenUp { giveUp() }
    }
}
