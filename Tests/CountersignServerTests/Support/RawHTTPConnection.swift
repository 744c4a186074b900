import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain TCP connection to 127.0.0.1, for tests that must control exactly when each byte of a
/// request is sent (a request in flight during shutdown).
final class RawHTTPConnection: Sendable {
    struct Failure: Error { let what: String }

    private let descriptor: Int32

    /// Connects from `source`, any address of the loopback network (127.0.0.2 looks to the
    /// server like another machine than 127.0.0.1).
    init(port: Int, source: String = "127.0.0.1") throws {
        // The descriptor is stored only once connected: a class whose stored properties are all
        // set runs its deinit when its initializer throws, and that deinit would close the
        // descriptor a second time, by then perhaps another thread's newly accepted socket.
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(what: "socket") }
        if source != "127.0.0.1" {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                close(descriptor)
                throw Failure(what: "bind to \(source)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw Failure(what: "connect")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { throw Failure(what: "write") }
            offset += written
        }
    }

    /// Makes closing the connection reset it (RST) rather than finish it (FIN), as a client
    /// that crashes or loses its network does.
    func resetOnClose() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// Tells the server nothing more will be sent (a half-close), keeping the way back open.
    func finishSending() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// What the server did with the connection within `timeout` of this call: whether it closed
    /// it, how long after this call, and what it sent before. Reads on a thread of its own, like
    /// `response()`; the time counts from the call, however late that thread starts. With
    /// `fromLastByte`, the time (and the `timeout`) count from the last byte the server sent
    /// instead: for a timeout that starts when a response has gone, however long it took.
    func closure(within timeout: Duration, fromLastByte: Bool = false) async -> (closed: Bool, after: Duration, received: String) {
        let start = ContinuousClock.now
        return await onThreadOfItsOwn { self.waitForClose(from: start, within: timeout, fromLastByte: fromLastByte) }
    }

    private func waitForClose(
        from start: ContinuousClock.Instant, within timeout: Duration, fromLastByte: Bool
    ) -> (closed: Bool, after: Duration, received: String) {
        let clock = ContinuousClock()
        var start = start
        var deadline = start + timeout
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while clock.now < deadline {
            let left = deadline - clock.now
            let (seconds, attoseconds) = left.components
            var wait = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
            if wait.tv_sec == 0 && wait.tv_usec == 0 { wait.tv_usec = 1000 }
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                received += buffer.prefix(count)
                if fromLastByte {
                    start = clock.now
                    deadline = start + timeout
                }
                continue
            }
            if count == 0 || errno == ECONNRESET {
                return (true, clock.now - start, String(decoding: received, as: UTF8.self))
            }
            if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                return (true, clock.now - start, String(decoding: received, as: UTF8.self))
            }
        }
        return (false, clock.now - start, String(decoding: received, as: UTF8.self))
    }

    /// `receiveAll()` on a thread of its own: a blocking read on one of the few threads that run
    /// Swift tasks would hold up the server under test, which runs on them too.
    func response() async throws -> String {
        try await onThreadOfItsOwn { try self.receiveAll() }
    }

    /// Everything the server sends until it closes the connection (at most 30 s). Blocks.
    func receiveAll() throws -> String {
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            received += buffer.prefix(count)
            // One response is all these tests expect; stop once it is complete.
            if let text = String(bytes: received, encoding: .utf8), let split = text.range(of: "\r\n\r\n"),
               let lengthLine = text[..<split.lowerBound].split(separator: "\r\n")
                .first(where: { $0.lowercased().hasPrefix("content-length:") }),
               let length = Int(lengthLine.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)),
               text.utf8.count - text.utf8.distance(from: text.utf8.startIndex, to: split.upperBound) >= length {
                break
            }
        }
        return String(decoding: received, as: UTF8.self)
    }
}
