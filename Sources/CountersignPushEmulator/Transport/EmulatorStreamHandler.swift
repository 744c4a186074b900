import Foundation
import NIOCore
import NIOHTTP2

/// Collects one HTTP/2 stream's request and writes the emulator's answer on the same stream.
///
/// Works on frame payloads directly rather than through an HTTP/1 codec: the HPACK header
/// list keeps duplicates and order exactly as sent (APNs answers `DuplicateHeaders`), and at
/// tens of thousands of requests a second the translation to HTTP/1 types is work for nothing.
final class EmulatorStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let connection: EmulatorConnection.Identity
    private let handle: EmulatorRequestHandler
    private var head: HTTP2Frame.FramePayload.Headers?
    private var body: ByteBuffer?
    private var answered = false

    init(connection: EmulatorConnection.Identity, handle: @escaping EmulatorRequestHandler) {
        self.connection = connection
        self.handle = handle
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            // A second HEADERS frame is a trailer block; nothing here sends one, so it is ignored.
            if head == nil { head = frame }
            if frame.endStream { answer(context: context) }
        case .data(let frame):
            if case .byteBuffer(var bytes) = frame.data {
                if body == nil {
                    body = bytes
                } else {
                    body!.writeBuffer(&bytes)
                }
            }
            if frame.endStream { answer(context: context) }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func answer(context: ChannelHandlerContext) {
        guard !answered, let head else { return }
        answered = true
        var method = ""
        var path = ""
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(head.headers.count)
        for (name, value, _) in head.headers {
            if name.utf8.first == UInt8(ascii: ":") {
                if name == ":method" { method = value } else if name == ":path" { path = value }
            } else {
                headers.append((name, value))
            }
        }
        let request = EmulatorRequest(
            method: method, path: path, headers: headers,
            body: body.map { Data($0.readableBytesView) } ?? Data(), connection: connection)
        let response = handle(request)

        var fields = [(":status", String(response.status))]
        fields.reserveCapacity(response.headers.count + 1)
        for header in response.headers { fields.append((header.name, header.value)) }
        let hasBody = !response.body.isEmpty
        let frame = HTTP2Frame.FramePayload.Headers(headers: .init(fields), endStream: !hasBody)
        context.write(wrapOutboundOut(.headers(frame)), promise: nil)
        if hasBody {
            let bytes = context.channel.allocator.buffer(bytes: response.body)
            context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(bytes), endStream: true))), promise: nil)
        }
        // The multiplexer holds stream flushes until the connection's read burst ends, so
        // responses to a burst of requests share TLS records and system calls.
        context.flush()
    }
}
