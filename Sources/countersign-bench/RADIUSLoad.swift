import CountersignRADIUS
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A UDP socket on 127.0.0.1 connected to the server's RADIUS port: one source address and port,
/// as one gateway has. A request's duplicate is a duplicate only from the same socket.
final class GatewaySocket: Sendable {
    let descriptor: Int32
    /// The local port, the gateway's source port.
    let port: Int

    init(serverPort: Int) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(serverPort).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard connected == 0, named == 0 else {
            close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
        // recv wakes every 20 ms while nothing arrives, to see which requests went unanswered.
        var wake = timeval(tv_sec: 0, tv_usec: 20_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wake, socklen_t(MemoryLayout<timeval>.size))
        var buffer: Int32 = 4 << 20
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &buffer, socklen_t(MemoryLayout<Int32>.size))
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: local.sin_port))
    }

    deinit {
        close(descriptor)
    }
}

/// The bench's load generator: closed loops over UDP, on threads of their own so that the
/// server's event loops and the generator do not queue behind each other in one executor. A run
/// is a set of lanes, one socket and one thread each; a lane has up to 256 slots, slot `i` using
/// Identifier `i`, and each slot sends its queue of requests one after another, the next as soon
/// as the answer to the last arrives (or it is given up after `timeout`). Requests in flight are
/// therefore the number of slots. Packets are written before the run: in the measured time the
/// generator only sends, receives and checks each answer's Response Authenticator.
struct RADIUSLoad: Sendable {
    struct Lane: Sendable {
        let socket: GatewaySocket
        /// Each slot's requests in the order they are sent; slot `i`'s carry Identifier `i`.
        let slots: [[GatewayPackets.Request]]
    }

    /// What a run's requests got.
    struct Outcome: Sendable {
        /// Send to answer, in milliseconds, of each answered request.
        var latencies: [Double] = []
        /// Answers by code (2 Access-Accept, 3 Access-Reject, 11 Access-Challenge).
        var codes: [UInt8: Int] = [:]
        /// The Access-Rejects by Reply-Message.
        var rejections: [String: Int] = [:]
        /// Requests no answer came to within the timeout.
        var unanswered = 0
        /// Datagrams that answer no request in flight (late, or not authentic).
        var stray = 0
        /// CPU time of the generator's threads.
        var generatorCPU = 0.0
        /// From the first request sent to the end of the run (the last answer, or the last
        /// request given up), in seconds.
        var elapsed = 0.0

        var answered: Int { latencies.count }
        var sent: Int { answered + unanswered }

        mutating func merge(_ other: Outcome) {
            latencies += other.latencies
            codes.merge(other.codes, uniquingKeysWith: +)
            rejections.merge(other.rejections, uniquingKeysWith: +)
            unanswered += other.unanswered
            stray += other.stray
            generatorCPU += other.generatorCPU
        }
    }

    /// Slots each lane starts at once.
    static let initialBurst = 16

    let packets: GatewayPackets
    /// How long an answer is waited for before its request counts as unanswered.
    let timeout: Double

    func run(_ lanes: [Lane]) async -> Outcome {
        let start = Self.monotonic()
        var total = await withTaskGroup(of: Outcome.self) { group in
            for lane in lanes {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        Thread { continuation.resume(returning: drive(lane)) }.start()
                    }
                }
            }
            return await group.reduce(into: Outcome()) { $0.merge($1) }
        }
        total.elapsed = Self.monotonic() - start
        return total
    }

    /// One lane's closed loops, on the calling thread.
    private func drive(_ lane: Lane) -> Outcome {
        let descriptor = lane.socket.descriptor
        let cpuStart = Self.threadCPU()
        var outcome = Outcome()
        var next = [Int](repeating: 0, count: lane.slots.count)
        // When each slot's request in flight was sent; 0 when the slot is idle.
        var sentAt = [Double](repeating: 0, count: lane.slots.count)
        var inFlight = 0

        func send(_ slot: Int) {
            let bytes = lane.slots[slot][next[slot]].bytes
            _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }
            sentAt[slot] = Self.monotonic()
            inFlight += 1
        }
        func finish(_ slot: Int) {
            sentAt[slot] = 0
            inFlight -= 1
            next[slot] += 1
            if next[slot] < lane.slots[slot].count { send(slot) }
        }

        // The slots start a few at a time, then one more with each datagram received, as a
        // gateway's logins do, rather than as one burst of hundreds of datagrams.
        var started = 0
        func start(upTo count: Int) {
            while started < min(count, lane.slots.count) {
                if !lane.slots[started].isEmpty { send(started) }
                started += 1
            }
        }
        start(upTo: Self.initialBurst)
        var buffer = [UInt8](repeating: 0, count: RADIUSPacket.maximumLength)
        var lastScan = Self.monotonic()
        while inFlight > 0 || started < lane.slots.count {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            let now = Self.monotonic()
            if count >= RADIUSPacket.headerLength {
                let answer = buffer[0..<count]
                let slot = Int(answer[1])
                if slot < lane.slots.count, sentAt[slot] > 0, packets.isAnswer(answer, to: lane.slots[slot][next[slot]]) {
                    outcome.latencies.append((now - sentAt[slot]) * 1000)
                    outcome.codes[answer[0], default: 0] += 1
                    if answer[0] == RADIUSPacket.Code.accessReject.rawValue {
                        outcome.rejections[Self.replyMessage(answer), default: 0] += 1
                    }
                    finish(slot)
                } else {
                    outcome.stray += 1
                }
            }
            start(upTo: started + 1)
            if now - lastScan > 0.02 {
                lastScan = now
                for slot in sentAt.indices where sentAt[slot] > 0 && now - sentAt[slot] > timeout {
                    outcome.unanswered += 1
                    finish(slot)
                }
            }
        }
        outcome.generatorCPU = Self.threadCPU() - cpuStart
        return outcome
    }

    /// The Reply-Messages of an answer, joined.
    private static func replyMessage(_ answer: ArraySlice<UInt8>) -> String {
        guard let packet = try? RADIUSPacket(parsing: Array(answer)) else { return "(unreadable)" }
        return String(decoding: packet.all(RADIUSAttribute.replyMessage).joined(), as: UTF8.self)
    }

    static func monotonic() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func threadCPU() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
