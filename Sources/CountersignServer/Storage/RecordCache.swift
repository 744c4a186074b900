import Synchronization

/// Rows that every request reads and that change rarely (a relying party's client, say), kept
/// in memory so that the hot path does not read them again. Whatever changes such a row forgets
/// it here (`forget(_:)`), on this node at once and on the others through `ClusterRelay`; an
/// entry also lapses after `lifetime`, which bounds the damage of a change announcement that
/// never arrived.
///
/// A read that began before a change must not store what it read after the change forgot the
/// key: `generation` is taken before the read and `remember` stores only if nothing was
/// forgotten since. Forgetting is rare, so one generation for the whole cache is enough.
final class RecordCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var entries: [Key: (value: Value, until: ContinuousClock.Instant)] = [:]
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())
    let lifetime: Duration
    /// Entries kept at most; past it, the expired ones go, and if none has, all of them.
    let capacity: Int

    init(lifetime: Duration, capacity: Int) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The remembered value, while it has not lapsed.
    func value(for key: Key) -> Value? {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard let entry = state.entries[key], entry.until > now else { return nil }
            return entry.value
        }
    }

    /// Take this before reading the row, and hand it to `remember`.
    var generation: UInt64 {
        state.withLock { $0.generation }
    }

    /// Stores `value`, read after `generation` was taken, unless a key was forgotten since.
    func remember(_ value: Value, for key: Key, readAt generation: UInt64) {
        let now = ContinuousClock.now
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.entries.count >= capacity, state.entries[key] == nil {
                state.entries = state.entries.filter { $0.value.until > now }
                if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            }
            state.entries[key] = (value, now + lifetime)
        }
    }

    /// Drops `key`, and makes every read under way forget what it read.
    func forget(_ key: Key) {
        state.withLock { state in
            state.generation &+= 1
            state.entries[key] = nil
        }
    }

    /// Drops everything: after the announcements of changes may have been missed.
    func forgetAll() {
        state.withLock { state in
            state.generation &+= 1
            state.entries.removeAll()
        }
    }

    var count: Int {
        state.withLock { $0.entries.count }
    }
}
