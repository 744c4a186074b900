import CountersignRADIUS
import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// RADIUS over UDP (RFC 2865, port 1812 by convention): every datagram is answered in a task of
/// its own, since a push answer waits for the user's decision. Requests in flight are bounded;
/// past the bound a datagram is dropped, and the gateway retries. On shutdown the socket closes
/// and the waits in flight end with a Reject (`ApprovalEvents.isClosed`).
struct RADIUSListener: Service {
    let host: String
    let port: Int
    let authentication: RADIUSAuthentication
    let logger: Logger
    /// The port, once the socket is bound.
    let bound = BoundPort()
    /// Requests answered at once, at most.
    static let maximumInFlight = 10_000

    func run() async throws {
        // Whoever waits for the port learns that there is none if binding fails.
        defer { bound.finish() }
        let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            // NIO reads at most 2,048 octets of a datagram by default; a RADIUS packet may have
            // 4,096 (RFC 2865 §3), and what comes past that is padding the reader ignores.
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: RADIUSPacket.maximumLength))
            // The kernel's default buffer holds about 256 datagrams: a burst past it was lost before
            // the listener saw it (BENCHMARKS.md, RADIUS). 8 MiB, as far as net.core.rmem_max allows.
            .channelOption(.socketOption(.so_rcvbuf), value: 8 * 1024 * 1024)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(
                        wrappingChannelSynchronously: channel)
                }
            }
        let bound = channel.channel.localAddress?.port ?? port
        logger.info("RADIUS listening on UDP \(host):\(bound)")
        self.bound.set(bound)
        let inFlight = InFlightCount()
        try await withGracefulShutdownHandler {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await envelope in inbound {
                        guard inFlight.enter(limit: Self.maximumInFlight) else {
                            authentication.metrics.radiusDropped("overload")
                            continue
                        }
                        let authentication = authentication
                        group.addTask {
                            defer { inFlight.leave() }
                            guard let source = Self.source(envelope.remoteAddress) else { return }
                            let datagram = Array(envelope.data.readableBytesView)
                            guard let answer = await authentication.answer(datagram, from: source) else { return }
                            try? await outbound.write(
                                AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: ByteBuffer(bytes: answer)))
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            channel.channel.close(promise: nil)
        }
    }

    static func source(_ address: SocketAddress) -> RADIUSSource? {
        guard let text = address.ipAddress, let octets = IPNetwork.address(text), let port = address.port else { return nil }
        let shown = octets.count == 16 ? "[\(text)]:\(port)" : "\(IPNetwork.addressText(octets)):\(port)"
        return RADIUSSource(address: octets, port: port, text: shown)
    }
}

extension RADIUSAuthentication {
    /// The UDP listener that answers with this.
    func listening(host: String, port: Int) -> RADIUSListener {
        RADIUSListener(host: host, port: port, authentication: self, logger: logger)
    }
}

/// A port learnt once a socket is bound, waited for by whoever needs it (tests, benchmarks).
final class BoundPort: Sendable {
    private let stream: AsyncStream<Int>
    private let continuation: AsyncStream<Int>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
    }

    func set(_ port: Int) {
        continuation.yield(port)
    }

    /// The bound port; nil if the listener finished without one.
    func value() async -> Int? {
        for await port in stream { return port }
        return nil
    }

    func finish() {
        continuation.finish()
    }
}

/// Requests being answered, under a bound (the UDP listener's, and each RadSec connection's).
final class InFlightCount: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts one more unless `limit` are in flight.
    func enter(limit: Int) -> Bool {
        guard count.add(1, ordering: .relaxed).newValue <= limit else {
            count.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func leave() {
        count.subtract(1, ordering: .relaxed)
    }
}

/// The RADIUS listeners a node runs, each when configured.
struct RADIUSListeners: Sendable {
    let udp: RADIUSListener?
    let tls: RadSecListener?

    var services: [any Service] {
        [udp as (any Service)?, tls].compactMap { $0 }
    }
}
