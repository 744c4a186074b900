import Synchronization

/// Wakes idle dispatch workers when a node has queued notifications, so that a push leaves as
/// soon as the transaction that queued it commits rather than at the next poll. A signal wakes
/// one waiting worker (which wakes another if it finds a full batch); one given while none
/// waits is kept for the next wait. `close` wakes every worker and every later wait, for
/// shutdown.
final class PushWakeup: Sendable {
    private struct State {
        var pending = false
        var closed = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    func signal() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard let id = state.waiters.keys.min() else {
                state.pending = true
                return nil
            }
            return state.waiters.removeValue(forKey: id)
        }
        waiter?.resume()
    }

    func close() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.closed = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns on a signal, after `timeout` (if given), or when the task is cancelled.
    func wait(upTo timeout: Duration?) async {
        if state.withLock({ state in
            defer { state.pending = false }
            return state.pending || state.closed
        }) { return }
        guard let timeout else { return await waitForSignal() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.waitForSignal() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal() async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.pending || state.closed || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
