#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why one server could not be used before any bind: it decides whether the client tries the
/// next server, and which `LDAPError` it reports when none is left.
enum ConnectionFailure: Error {
    /// No TCP connection (refused, no route, no answer within the connect timeout, no address).
    case unreachable(String)
    /// TCP connected, TLS did not (certificate, host name, handshake, StartTLS refused).
    case tls(String)
    /// Connected, but the server did not answer an operation in time.
    case timeout
    /// Not the server's fault: the configuration cannot work (the CA file does not load).
    case configuration(String)
}

/// A TCP connection made here rather than by libldap, so that a server that refuses or does not
/// answer is told apart from one whose TLS fails: libldap reports both as "can't contact LDAP
/// server" (-1) once its own connect has failed, and the administrator needs to know which.
enum TCPConnection {
    /// A connected, blocking socket to `host`:`port`, trying each of its addresses until one
    /// accepts before `deadline`. The name lookup itself is not bounded (glibc's resolver has its
    /// own timeouts, from resolv.conf).
    static func connect(host: String, port: Int, until deadline: ContinuousClock.Instant) throws(ConnectionFailure) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let lookup = getaddrinfo(host, String(port), &hints, &found)
        guard lookup == 0, let found else {
            throw .unreachable("cannot resolve \(host): \(String(cString: gai_strerror(lookup)))")
        }
        defer { freeaddrinfo(found) }
        var reason = "no address"
        var cursor: UnsafeMutablePointer<addrinfo>? = found
        while let address = cursor?.pointee {
            cursor = address.ai_next
            let descriptor = socket(
                address.ai_family,
                address.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                address.ai_protocol)
            guard descriptor >= 0 else {
                reason = String(cString: strerror(errno))
                continue
            }
            switch attempt(descriptor, address, until: deadline) {
            case nil:
                let flags = fcntl(descriptor, F_GETFL)
                _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK)
                return descriptor
            case let failure?:
                close(descriptor)
                reason = failure
            }
        }
        throw .unreachable(reason)
    }

    /// Connects `descriptor` (non-blocking) to `address`; nil when connected, else why not.
    private static func attempt(_ descriptor: Int32, _ address: addrinfo, until deadline: ContinuousClock.Instant) -> String? {
        if connectSocket(descriptor, address) == 0 { return nil }
        guard errno == EINPROGRESS else { return String(cString: strerror(errno)) }
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return "no connection within the connect timeout" }
            let milliseconds = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: max(1, milliseconds)))
            if ready < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            if ready == 0 { continue }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
            return error == 0 ? nil : String(cString: strerror(error))
        }
    }
}

/// The system's `connect`, which `TCPConnection.connect` would shadow inside the type.
private func connectSocket(_ descriptor: Int32, _ address: addrinfo) -> Int32 {
    connect(descriptor, address.ai_addr, address.ai_addrlen)
}
