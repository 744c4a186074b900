import Foundation
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// The HTTP/2 connections of one APNs credential: one per event loop, up to
/// `connectionsPerCredential` (a connection is served by one thread), opened on first use and
/// again whenever one closes or is going away. Batches take turns over them.
///
/// Speaks HTTP/2 over TLS with ALPN "h2" only, as APNs does, and trusts the system's roots or
/// the configured CA file; a certificate credential presents its client certificate.
final class APNsConnectionPool: Sendable {
    static let connectTimeout: TimeAmount = .seconds(10)

    private let connections: [APNsConnection]
    private let next = Atomic<Int>(0)
    /// `host` or `host:port`, as `:authority` carries it.
    let authority: String

    init(baseURL: String, configuration: PushConfiguration, certificate: NIOSSLPKCS12Bundle?,
         group: any EventLoopGroup = PushEventLoops.group) throws {
        guard let url = URLComponents(string: baseURL), url.scheme == "https", let host = url.host, !host.isEmpty else {
            throw PushCredentialUnusable(reason: "the APNs URL \(baseURL) is not an https URL")
        }
        let port = url.port ?? 443
        authority = port == 443 ? host : "\(host):\(port)"
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        if let file = configuration.trustedCAFile {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
        }
        if let certificate {
            tls.certificateChain = certificate.certificateChain.map { .certificate($0) }
            tls.privateKey = .privateKey(certificate.privateKey)
        }
        let context = try NIOSSLContext(configuration: tls)
        // An address is verified against the certificate's IP entries, and is never sent as SNI.
        let serverName = (try? SocketAddress(ipAddress: host, port: port)) == nil ? host : nil
        let loops = Array(group.makeIterator())
        connections = loops.prefix(max(1, configuration.connectionsPerCredential)).map { loop in
            APNsConnection(loop: loop, host: host, port: port, serverName: serverName, tls: context)
        }
    }

    /// Sends a batch on one connection and returns each request's result, in order.
    func send(_ requests: [APNsWireRequest], timeout: TimeAmount) async -> [APNsWireResult] {
        guard !requests.isEmpty else { return [] }
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        return await connections[index % connections.count].send(requests, timeout: timeout)
    }

    func shutdown() async {
        for connection in connections { await connection.close() }
    }
}

/// One connection slot of the pool, on its own event loop.
private final class APNsConnection: Sendable {
    private struct Open: Sendable {
        let channel: any Channel
        let state: APNsConnectionState
    }

    private enum Slot: Sendable {
        case none
        case connecting(EventLoopFuture<Open>)
        case open(Open)
        case closed
    }

    private let loop: any EventLoop
    private let host: String
    private let port: Int
    private let serverName: String?
    private let tls: NIOSSLContext
    private let slot = Mutex<Slot>(.none)

    init(loop: any EventLoop, host: String, port: Int, serverName: String?, tls: NIOSSLContext) {
        self.loop = loop
        self.host = host
        self.port = port
        self.serverName = serverName
        self.tls = tls
    }

    func send(_ requests: [APNsWireRequest], timeout: TimeAmount) async -> [APNsWireResult] {
        let open: Open
        do {
            open = try await connection().get()
        } catch {
            return Array(repeating: .unanswered("APNs could not be reached: \(error)"), count: requests.count)
        }
        let promise = loop.makePromise(of: [APNsWireResult].self)
        open.channel.writeAndFlush(APNsWireBatch(requests: requests, timeout: timeout, promise: promise)).whenFailure { error in
            // The batch never reached the handler (the channel had closed): nothing was sent.
            promise.succeed(Array(repeating: .unanswered("the connection to APNs closed: \(error)"), count: requests.count))
        }
        return (try? await promise.futureResult.get())
            ?? Array(repeating: .unanswered("the connection to APNs closed"), count: requests.count)
    }

    /// The open connection, or the one being opened; a closed or closing one is replaced.
    private func connection() -> EventLoopFuture<Open> {
        let (future, opened) = slot.withLock { slot -> (EventLoopFuture<Open>, Bool) in
            switch slot {
            case .open(let open) where open.channel.isActive && !open.state.isClosing:
                return (loop.makeSucceededFuture(open), false)
            case .connecting(let future):
                return (future, false)
            case .closed:
                return (loop.makeFailedFuture(ChannelError.ioOnClosedChannel), false)
            case .none, .open:
                // A closing connection closes itself once its streams are answered.
                let future = connect()
                slot = .connecting(future)
                return (future, true)
            }
        }
        if opened {
            future.whenComplete { result in
                self.slot.withLock { slot in
                    guard case .connecting = slot else { return }
                    switch result {
                    case .success(let open): slot = .open(open)
                    case .failure: slot = .none  // the next batch tries again
                    }
                }
            }
        }
        return future
    }

    /// Connects, and succeeds once TLS has agreed on HTTP/2: a refused handshake fails here,
    /// with its cause, rather than in the first batch.
    private func connect() -> EventLoopFuture<Open> {
        let state = APNsConnectionState()
        let ready = loop.makePromise(of: Void.self)
        let tls = self.tls
        let serverName = self.serverName
        let settings = [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
            // Responses are small; the stream window only has to cover an error body.
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        ]
        let connected = ClientBootstrap(group: loop)
            .connectTimeout(APNsConnectionPool.connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    let flushes = APNsFlushCoalescer()
                    try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    try pipeline.addHandler(flushes)
                    try pipeline.addHandler(NIOHTTP2Handler(mode: .client, initialSettings: settings))
                    try pipeline.addHandler(APNsStreamsHandler(state: state, flushes: flushes, ready: ready))
                }
            }
            .connect(host: host, port: port)
        connected.whenFailure { ready.fail($0) }
        return connected.and(ready.futureResult).map { channel, _ in Open(channel: channel, state: state) }
    }

    func close() async {
        let current = slot.withLock { slot -> Slot in
            defer { slot = .closed }
            return slot
        }
        switch current {
        case .open(let open):
            try? await open.channel.close()
        case .connecting(let future):
            if let open = try? await future.get() { try? await open.channel.close() }
        case .none, .closed:
            break
        }
    }
}
