import Foundation
import NIOCore
import NIOHTTP1

/// Answers a request the HTTP parser refuses — a NUL, CR or LF inside a header value (which
/// RFC 9110 §5.5 says must be rejected), an invalid header name, a broken request line — with
/// 400 and the JSON error body every other answer has, naming the fault, then closes the
/// connection. Without it the client gets a bare 400 with no error code. No route runs for such
/// a request, so no route-specific error (such as `malformed_signature`) can be given.
final class MalformedHTTPAnswer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var answered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !answered else { return }
        answered = true
        let body = Self.body(for: parserError)
        var head = HTTPResponseHead(version: .http1_1, status: .badRequest)
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Cache-Control", value: "no-store")
        head.headers.add(name: "Content-Length", value: String(body.readableBytes))
        head.headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        // Handlers run on their channel's event loop, and so does this completion.
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    static func body(for error: HTTPParserError) -> ByteBuffer {
        let why = switch error {
        case .invalidHeaderToken, .invalidCharactersUsed, .lfExpected: "a header holds a character no header may hold (NUL, CR or LF; RFC 9110, section 5.5)"
        case .headerOverflow: "the request's headers are too large"
        case .invalidMethod: "the request method is not valid"
        case .invalidURL: "the request target is not valid"
        case .invalidVersion: "the HTTP version is not valid"
        case .invalidChunkSize: "a chunk size is not valid"
        case .invalidContentLength, .unexpectedContentLength: "the Content-Length is not valid"
        default: "the request is not valid HTTP/1.1"
        }
        let json = #"{"error":"invalid_request","error_description":"\#(why)"}"#
        return ByteBuffer(string: json)
    }
}
