import NIOCore
import Synchronization

/// The open connections of one emulator, so that `stop()` can close them (closing the
/// listening socket alone leaves accepted connections running), and the count of connections
/// that completed their TLS handshake (counted at their first HTTP/2 frame).
final class ConnectionRegistry: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var handshakes = 0
        var closed = false
    }

    private let state = Mutex(State())

    /// Remembers `channel` until it closes. Returns false once the emulator is stopping, and
    /// the caller must then refuse the connection.
    func opened(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        let admitted = state.withLock { state in
            guard !state.closed else { return false }
            state.open[id] = channel
            return true
        }
        if admitted {
            channel.closeFuture.whenComplete { [weak self] _ in
                self?.state.withLock { _ = $0.open.removeValue(forKey: id) }
            }
        }
        return admitted
    }

    /// Counts a completed handshake and returns its 1-based number.
    func handshakeCompleted() -> Int {
        state.withLock { state in
            state.handshakes += 1
            return state.handshakes
        }
    }

    var handshakeCount: Int { state.withLock { $0.handshakes } }

    /// Stops admitting connections and returns the ones still open.
    func closeAll() -> [any Channel] {
        state.withLock { state in
            state.closed = true
            return Array(state.open.values)
        }
    }
}
