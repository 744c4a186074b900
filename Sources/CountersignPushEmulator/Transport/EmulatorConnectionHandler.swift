import Foundation
import NIOCore
import NIOHTTP2
import NIOSSL

/// Serves one HTTP/2 connection: reassembles each stream's request from its frames, answers
/// it on the same stream, and keeps the client's flow-control windows open.
///
/// Works on the connection's frames directly, without a child channel per stream: at tens of
/// thousands of requests a second on one connection, a channel and pipeline per stream cost
/// more than everything else the emulator does. The HPACK header list also keeps duplicates
/// and order exactly as sent, which APNs's `DuplicateHeaders` check needs.
final class EmulatorConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// The connection-level receive window opened at once (HTTP/2 starts it at 64 KiB), so that
    /// flow control never paces a sender; consumed bytes are handed back in batches of
    /// `windowUpdateBatch`.
    static let connectionWindow = 16 << 20
    static let windowUpdateBatch = 1 << 20
    private static let initialConnectionWindow = 65_535

    private struct PartialRequest {
        var head: HTTP2Frame.FramePayload.Headers
        var body: ByteBuffer?
    }

    private let tls: NIOSSLServerHandler
    private let registry: ConnectionRegistry
    private let handle: EmulatorRequestHandler
    /// Set by the first frame: frames only arrive once the TLS handshake is done.
    private var identity: ConnectionIdentity?
    private var streams: [HTTP2StreamID: PartialRequest] = [:]
    private var unacknowledgedBytes = 0
    private var needsFlush = false

    init(tls: NIOSSLServerHandler, registry: ConnectionRegistry, handle: @escaping EmulatorRequestHandler) {
        self.tls = tls
        self.registry = registry
        self.handle = handle
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if identity == nil { establish(context: context) }
        switch frame.payload {
        case .headers(let headers):
            // A second HEADERS frame is a trailer block; no push sender sends one, so it is ignored.
            if streams[frame.streamID] == nil { streams[frame.streamID] = PartialRequest(head: headers) }
            if headers.endStream { answer(frame.streamID, context: context) }
        case .data(let payload):
            let size = payload.data.readableBytes + (payload.paddingBytes.map { $0 + 1 } ?? 0)
            unacknowledgedBytes += size
            if case .byteBuffer(var bytes) = payload.data {
                if streams[frame.streamID]?.body == nil {
                    streams[frame.streamID]?.body = bytes
                } else {
                    streams[frame.streamID]?.body?.writeBuffer(&bytes)
                }
            }
            if payload.endStream {
                answer(frame.streamID, context: context)
            } else if size > 0 {
                // A body longer than one stream window keeps flowing.
                write(HTTP2Frame(streamID: frame.streamID, payload: .windowUpdate(windowSizeIncrement: size)), context: context)
            }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unacknowledgedBytes >= Self.windowUpdateBatch {
            write(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: unacknowledgedBytes)),
                  context: context)
            unacknowledgedBytes = 0
        }
        // Answers to a whole read burst leave in one flush: shared TLS records and system calls.
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A stream reset by the client, or refused by the HTTP/2 layer, is forgotten.
        if let closed = event as? StreamClosedEvent { streams[closed.streamID] = nil }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Stream errors have been answered with RST_STREAM by the HTTP/2 handler, and
        // connection errors close the connection there; nothing is left to do here.
    }

    private func establish(context: ChannelHandlerContext) {
        let subject = (try? tls.peerCertificate?.toDERBytes()).flatMap(CertificateSubject.commonName(der:))
        identity = ConnectionIdentity(number: registry.handshakeCompleted(), clientCertificateSubject: subject)
        write(HTTP2Frame(streamID: .rootStream,
                         payload: .windowUpdate(windowSizeIncrement: Self.connectionWindow - Self.initialConnectionWindow)),
              context: context)
    }

    private func answer(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let partial = streams.removeValue(forKey: streamID), let identity else { return }
        var method = ""
        var path = ""
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(partial.head.headers.count)
        for (name, value, _) in partial.head.headers {
            if name.utf8.first == UInt8(ascii: ":") {
                if name == ":method" { method = value } else if name == ":path" { path = value }
            } else {
                headers.append((name, value))
            }
        }
        let request = EmulatorRequest(
            method: method, path: path, headers: headers,
            body: partial.body.map { Data($0.readableBytesView) } ?? Data(), connection: identity)
        let response = handle(request)

        var fields = [(":status", String(response.status))]
        fields.reserveCapacity(response.headers.count + 1)
        for header in response.headers { fields.append((header.name, header.value)) }
        let hasBody = !response.body.isEmpty
        write(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: .init(fields), endStream: !hasBody))),
              context: context)
        if hasBody {
            let bytes = context.channel.allocator.buffer(bytes: response.body)
            write(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(bytes), endStream: true))),
                  context: context)
        }
    }

    private func write(_ frame: HTTP2Frame, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(frame), promise: nil)
        needsFlush = true
    }
}
