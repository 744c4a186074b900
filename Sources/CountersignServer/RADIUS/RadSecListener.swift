import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// Where RadSec gets its TLS: the server's certificate chain and key, and the CAs a client's
/// certificate must chain to (mutual TLS, RFC 6614 §2.3). Files in PEM.
public struct RadSecConfiguration: Sendable {
    public var port: Int
    public var certificateChainFile: String
    public var privateKeyFile: String
    public var clientCAFile: String

    public init(port: Int, certificateChainFile: String, privateKeyFile: String, clientCAFile: String) {
        self.port = port
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
        self.clientCAFile = clientCAFile
    }

    /// The server side of the TLS: TLS 1.2 or later, a client certificate required and checked
    /// against the client CAs (no host name: clients are named by their networks).
    func tlsContext() throws -> NIOSSLContext {
        do {
            return try makeContext()
        } catch {
            throw RadSecConfigurationError(reason: "\(error)")
        }
    }

    private func makeContext() throws -> NIOSSLContext {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificateChainFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)))
        tls.minimumTLSVersion = .tlsv12
        tls.certificateVerification = .noHostnameVerification
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(clientCAFile))
        return try NIOSSLContext(configuration: tls)
    }
}

/// The RadSec certificate, key or client CAs cannot be used.
public struct RadSecConfigurationError: Error, CustomStringConvertible {
    let reason: String
    public var description: String {
        "the RadSec certificate chain, private key or client CA file cannot be used: \(reason)"
    }
}

/// RADIUS over TLS (RadSec, RFC 6614; TCP framing of RFC 6613), port 2083 by convention. Each
/// connection is a client's, checked by its certificate and, like UDP, by the networks of a
/// RADIUS client; the shared secret is `radsec` (RFC 6614 §2.3) and every request must still
/// carry a Message-Authenticator. Packets on one connection are answered concurrently, each in
/// its own task; a packet that would be dropped closes the connection (RFC 6613 §2.6.4), and so
/// does a length outside 20…4096 octets, after which the stream cannot be framed.
struct RadSecListener: Service {
    let host: String
    let port: Int
    /// Made when the server is built, so that a certificate or key that cannot be read stops the
    /// start with its reason.
    let context: NIOSSLContext
    let authentication: RADIUSAuthentication
    let logger: Logger
    let bound = BoundPort()

    /// The shared secret of RADIUS over TLS (RFC 6614 §2.3, item 4).
    static let secret = Array("radsec".utf8)
    /// A connection that sends no packet for this long is closed.
    static let idleTimeout: TimeAmount = .minutes(5)
    /// Packets answered at once on one connection.
    static let maximumInFlightPerConnection = 256

    func run() async throws {
        // Whoever waits for the port learns that there is none if binding fails.
        defer { bound.finish() }
        let context = context
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: Self.idleTimeout))
                    try channel.pipeline.syncOperations.addHandler(IdleCloser())
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(RADIUSStreamFraming()))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let port = server.channel.localAddress?.port ?? port
        logger.info("RadSec listening on TCP \(host):\(port)")
        bound.set(port)
        try await withGracefulShutdownHandler {
            try await server.executeThenClose { connections in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in connections {
                        group.addTask { await serve(connection) }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
    }

    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        let channel = connection.channel
        guard let remote = channel.remoteAddress, let source = RADIUSListener.source(remote) else {
            try? await channel.close()
            return
        }
        let authentication = authentication
        do {
            try await connection.executeThenClose { inbound, outbound in
                let inFlight = InFlightCount()
                try await withThrowingDiscardingTaskGroup { group in
                    // Packets being answered, not packets ever received: a proxy keeps one
                    // connection open for all its requests.
                    for try await frame in inbound {
                        guard inFlight.enter(limit: Self.maximumInFlightPerConnection) else { break }
                        group.addTask {
                            defer { inFlight.leave() }
                            let datagram = Array(frame.readableBytesView)
                            switch await authentication.dispose(datagram, from: source, secret: Self.secret) {
                            case .send(let answer):
                                try? await outbound.write(ByteBuffer(bytes: answer))
                            case .drop:
                                // RFC 6613 §2.6.4: what would be discarded ends the connection.
                                channel.close(promise: nil)
                            case .inProgress:
                                // A proxy's identifiers wrap around on a busy connection; the first
                                // copy's answer is on its way.
                                break
                            }
                        }
                    }
                }
            }
        } catch {
            logger.debug("a RadSec connection ended", metadata: ["source": "\(source.text)", "error": "\(error)"])
        }
    }
}

/// Cuts a TCP stream into RADIUS packets by their Length field (RFC 6613 §2.1). A length outside
/// 20…4096 cannot be a packet, and nothing after it can be framed: the connection is closed.
struct RADIUSStreamFraming: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    struct Unframeable: Error {}

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex + 2, as: UInt16.self) else { return .needMoreData }
        guard (20...4096).contains(Int(length)) else { throw Unframeable() }
        guard let packet = buffer.readSlice(length: Int(length)) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(packet))
        return .continue
    }
}

/// Closes a connection that went idle (`IdleStateHandler`'s read timeout).
private final class IdleCloser: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
