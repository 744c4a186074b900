#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// An HTTP/2-over-TLS listener on 127.0.0.1 that hands each request to an emulator.
///
/// Apple and Google speak HTTP/2 only to push senders, and a sender's behaviour under
/// multiplexing (one connection, many streams in flight) is what the benchmark measures, so
/// ALPN offers "h2" alone and there is no HTTP/1 fallback.
final class EmulatorServer: Sendable {
    /// Streams a client may have open at once; APNs advertises about as many.
    static let maximumConcurrentStreams = 1000

    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let listener: any Channel
    private let registry: ConnectionRegistry

    var connectionCount: Int { registry.handshakeCount }

    private init(port: Int, group: MultiThreadedEventLoopGroup, listener: any Channel, registry: ConnectionRegistry) {
        self.port = port
        self.group = group
        self.listener = listener
        self.registry = registry
    }

    /// Listens on a free port. `tls` gets TLS 1.2 as its floor and "h2" as its only protocol.
    static func start(tls: TLSConfiguration, handle: @escaping EmulatorRequestHandler) async throws -> EmulatorServer {
        var tls = tls
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw EmulatorError.tlsConfiguration("\(error)")
        }
        // A thread of its own: the emulator's work never waits behind the sender's event loops
        // or the test's tasks, and one connection is served by one thread in any case.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let registry = ConnectionRegistry()
        do {
            let listener = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        guard registry.opened(channel) else { throw ChannelError.ioOnClosedChannel }
                        try configure(channel, tls: context, registry: registry, handle: handle)
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            guard let port = listener.localAddress?.port else { throw ChannelError.unknownLocalAddress }
            return EmulatorServer(port: port, group: group, listener: listener, registry: registry)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private static func configure(_ channel: any Channel, tls: NIOSSLContext, registry: ConnectionRegistry,
                                  handle: @escaping EmulatorRequestHandler) throws {
        let pipeline = channel.pipeline.syncOperations
        let tlsHandler = NIOSSLServerHandler(context: tls)
        try pipeline.addHandler(tlsHandler)
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maximumConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
            // Per-stream receive window: a push body (4 KB at most) never waits for an update.
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        ]
        try pipeline.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: connectionConfiguration))
        try pipeline.addHandler(EmulatorConnectionHandler(tls: tlsHandler, registry: registry, handle: handle))
    }

    /// CPU time the emulator's event loop thread has used so far (user and system): a benchmark
    /// subtracts it to tell the sender's cost from the endpoint's.
    func eventLoopCPUTime() async throws -> Duration {
        try await group.next().submit {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
        }.get()
    }

    /// Closes the listener and every open connection, then ends the event loop thread.
    func stop() async throws {
        try? await listener.close()
        for channel in registry.closeAll() {
            try? await channel.close()
        }
        try await group.shutdownGracefully()
    }
}
