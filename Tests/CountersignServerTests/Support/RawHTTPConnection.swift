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

    init(port: Int) throws {
        #if canImport(Glibc)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(what: "socket") }
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

    /// `receiveAll()` on a thread of its own: a blocking read on one of the few threads that run
    /// Swift tasks would hold up the server under test, which runs on them too.
    func response() async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try self.receiveAll() })
            }
        }
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
