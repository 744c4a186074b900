import NIOCore
import NIOPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Shuts a connection's socket down when the connect timeout passes, so that a TLS handshake
/// blocked reading it ends at once with an error. libldap's own handshake timeout
/// (`LDAP_OPT_NETWORK_TIMEOUT`) cannot be relied on: with GnuTLS (OpenLDAP 2.5, Debian) it
/// spins on a server that accepts the connection and never answers, a core at 100 % and no end.
/// The timer runs on an event loop of its own, which does nothing else: not on GCD's global
/// queues, which on Linux are the threads that run Swift's tasks, nor on the server's event
/// loops; a busy process would fire it late on either while GnuTLS spins.
final class SocketDeadline: Sendable {
    private struct State {
        /// The socket while it may be shut down; nil once the watch is over.
        var descriptor: Int32?
        var fired = false
    }

    private let state: Mutex<State>
    /// One thread for every deadline of the process: a timer's work is a shutdown(2).
    private static let timers = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    init(descriptor: Int32, at deadline: ContinuousClock.Instant) {
        state = Mutex(State(descriptor: descriptor))
        let remaining = max(.zero, deadline - ContinuousClock.now)
        let nanoseconds = remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000
        Self.timers.next().scheduleTask(in: .nanoseconds(nanoseconds)) { [self] in
            state.withLock { state in
                guard let descriptor = state.descriptor else { return }
                shutdown(descriptor, Int32(SHUT_RDWR))
                state.fired = true
            }
        }
    }

    /// Ends the watch; whether the deadline had passed and shut the socket down. Once this
    /// returns the socket is never touched, so it may be closed (and its number reused).
    func end() -> Bool {
        state.withLock { state in
            state.descriptor = nil
            return state.fired
        }
    }
}
