import NIOCore
import NIOSSL
import Synchronization

/// What the emulator knows about one TLS connection once its handshake is done.
///
/// Filled in by `HandshakeObserver` on the connection's event loop and read when each stream
/// opens; the lock makes that hand-over safe without tying the two to one thread.
final class EmulatorConnection: Sendable {
    /// The facts a request carries about the connection it came on.
    struct Identity: Sendable {
        /// 1-based, in the order handshakes completed.
        var number: Int
        /// The subject common name of the client certificate, when one was presented.
        var clientCertificateSubject: String?
    }

    private let identity = Mutex<Identity?>(nil)

    var current: Identity {
        identity.withLock { $0 } ?? Identity(number: 0, clientCertificateSubject: nil)
    }

    func established(_ established: Identity) {
        identity.withLock { $0 = established }
    }
}

/// Numbers each connection and reads its client certificate once its TLS handshake is done,
/// then leaves the pipeline: after that it would only add a hop to every read.
///
/// The first decrypted bytes (the client's HTTP/2 preface) mark the end of the handshake:
/// application data cannot flow before it, and this needs no dependency on NIOTLS's events.
final class HandshakeObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let tls: NIOSSLServerHandler
    private let connection: EmulatorConnection
    private let registry: ConnectionRegistry

    init(tls: NIOSSLServerHandler, connection: EmulatorConnection, registry: ConnectionRegistry) {
        self.tls = tls
        self.connection = connection
        self.registry = registry
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let subject = (try? tls.peerCertificate?.toDERBytes()).flatMap(CertificateSubject.commonName(der:))
        connection.established(.init(number: registry.handshakeCompleted(), clientCertificateSubject: subject))
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
