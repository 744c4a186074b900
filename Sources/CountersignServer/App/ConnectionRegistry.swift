import Logging
import NIOCore
import Synchronization

/// The open HTTP connections of one server, held under a cap.
///
/// Closing new connections at the cap would let a few hundred clients that connect and send
/// nothing lock everyone else out, health checks included, until their idle timeout. So at the
/// cap a new connection first makes room by closing the connection that has waited longest
/// without a request being answered on it (idle, or still sending its request head); only when
/// every connection is busy answering is the new one closed instead.
final class ConnectionRegistry: Sendable {
    let maximum: Int
    private let logger: Logger
    private let state = Mutex(State())

    private struct Entry {
        let channel: any Channel
        /// Set while the connection may be closed to make room: the turn it took in `queue`.
        var evictableTurn: Int?
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// Connections that may be closed to make room, oldest first. A connection leaves the
        /// queue lazily: an item whose turn no longer matches its entry is skipped.
        var queue: [(id: ObjectIdentifier, turn: Int)] = []
        var queueStart = 0
        var nextTurn = 0
        /// Whether the cap was reported since the count was last well below it.
        var reportedFull = false
    }

    init(maximum: Int, logger: Logger) {
        self.maximum = maximum
        self.logger = logger
    }

    var count: Int { state.withLock { $0.entries.count } }

    /// Admits `channel`, which starts out evictable (it has sent nothing yet). Returns false
    /// when it must be closed because every connection is busy; a connection closed to make
    /// room is closed here.
    func admit(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        let (admitted, victim, report) = state.withLock { state -> (Bool, (any Channel)?, Bool) in
            var victim: (any Channel)?
            if state.entries.count >= maximum {
                victim = Self.popEvictable(&state)
                guard victim != nil else { return (false, nil, Self.shouldReport(&state)) }
            }
            state.entries[id] = Entry(channel: channel, evictableTurn: nil)
            Self.markEvictable(id, &state)
            return (true, victim, victim != nil && Self.shouldReport(&state))
        }
        if report {
            logger.warning("the connection cap is reached; idle connections are closed to make room", metadata: [
                "max_connections": "\(maximum)",
            ])
        }
        victim?.close(promise: nil)
        if !admitted {
            logger.debug("connection refused: every connection is busy", metadata: ["max_connections": "\(maximum)"])
        }
        return admitted
    }

    /// Whether the connection has no request being answered on it.
    func setEvictable(_ channel: any Channel, _ evictable: Bool) {
        let id = ObjectIdentifier(channel)
        state.withLock { state in
            guard let entry = state.entries[id] else { return }
            if evictable, entry.evictableTurn == nil {
                Self.markEvictable(id, &state)
            } else if !evictable {
                state.entries[id]?.evictableTurn = nil
            }
        }
    }

    func remove(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { state in
            state.entries[id] = nil
            if state.entries.count < maximum / 2 { state.reportedFull = false }
        }
    }

    private static func markEvictable(_ id: ObjectIdentifier, _ state: inout State) {
        let turn = state.nextTurn
        state.nextTurn += 1
        state.entries[id]?.evictableTurn = turn
        state.queue.append((id, turn))
        if state.queue.count - state.queueStart > 2 * state.entries.count + 1024 {
            let entries = state.entries
            state.queue = state.queue[state.queueStart...].filter { entries[$0.id]?.evictableTurn == $0.turn }
            state.queueStart = 0
        }
    }

    private static func popEvictable(_ state: inout State) -> (any Channel)? {
        defer { compact(&state) }
        while state.queueStart < state.queue.count {
            let item = state.queue[state.queueStart]
            state.queueStart += 1
            if let entry = state.entries[item.id], entry.evictableTurn == item.turn {
                state.entries[item.id] = nil
                return entry.channel
            }
        }
        return nil
    }

    /// Drops the consumed items once they make up most of the queue (`markEvictable` drops the
    /// stale ones), so that it stays within a small multiple of the number of connections.
    private static func compact(_ state: inout State) {
        guard state.queueStart > 1024, state.queueStart * 2 > state.queue.count else { return }
        state.queue.removeFirst(state.queueStart)
        state.queueStart = 0
    }

    private static func shouldReport(_ state: inout State) -> Bool {
        defer { state.reportedFull = true }
        return !state.reportedFull
    }
}
