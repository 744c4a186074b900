import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A TCP forwarder on a free loopback port that a test can cut and restore: the way to take a
/// shared PostgreSQL away from one server without stopping it for everyone else.
/// Cut, it drops every forwarded connection and closes new ones as soon as they arrive, as a
/// database that went away would.
final class TCPProxy: Sendable {
    let port: Int
    private let listener: any Channel
    private let state = Mutex(State())

    private struct State {
        var isCut = false
        var connections: [any Channel] = []
    }

    private init(port: Int, listener: any Channel) {
        self.port = port
        self.listener = listener
    }

    /// Listens on 127.0.0.1 and forwards each connection to `host`:`targetPort`.
    static func start(to host: String, port targetPort: Int) async throws -> TCPProxy {
        let shared = SharedState()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.autoRead, value: false)
            .childChannelInitializer { inbound in
                guard let proxy = shared.proxy, !proxy.isCut else { return inbound.close() }
                return ClientBootstrap(group: inbound.eventLoop)
                    .channelInitializer { outbound in
                        outbound.eventLoop.makeCompletedFuture {
                            try outbound.pipeline.syncOperations.addHandler(Forwarder(to: inbound))
                        }
                    }
                    .connect(host: host, port: targetPort)
                    .flatMap { outbound in
                        inbound.eventLoop.makeCompletedFuture {
                            try inbound.pipeline.syncOperations.addHandler(Forwarder(to: outbound))
                            proxy.track(inbound, outbound)
                        }.flatMap { inbound.setOption(ChannelOptions.autoRead, value: true) }
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let proxy = TCPProxy(port: listener.localAddress?.port ?? 0, listener: listener)
        shared.set(proxy)
        return proxy
    }

    /// `url` with its host and port replaced by this proxy's.
    func route(_ url: String) -> String {
        var components = URLComponents(string: url)!
        components.host = "127.0.0.1"
        components.port = port
        return components.string!
    }

    private var isCut: Bool { state.withLock { $0.isCut } }

    private func track(_ channels: any Channel...) {
        let refused = state.withLock { state -> Bool in
            if state.isCut { return true }
            state.connections += channels
            return false
        }
        if refused { for channel in channels { channel.close(promise: nil) } }
    }

    /// Drops every forwarded connection; new ones are closed on arrival until `restore()`.
    func cut() {
        let open = state.withLock { state -> [any Channel] in
            state.isCut = true
            defer { state.connections = [] }
            return state.connections
        }
        for channel in open { channel.close(promise: nil) }
    }

    func restore() {
        state.withLock { $0.isCut = false }
    }

    func stop() async {
        cut()
        try? await listener.close()
    }

    /// The proxy, for the connection initializer, which exists before the proxy does.
    private final class SharedState: Sendable {
        private let value = Mutex<TCPProxy?>(nil)
        var proxy: TCPProxy? { value.withLock { $0 } }
        func set(_ proxy: TCPProxy) { value.withLock { $0 = proxy } }
    }

    /// Writes what one side reads to the other, and closes the other when one side closes.
    private final class Forwarder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let peer: any Channel

        init(to peer: any Channel) { self.peer = peer }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            peer.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            peer.close(promise: nil)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
