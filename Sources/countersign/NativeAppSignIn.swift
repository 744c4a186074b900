import CountersignCommandLine
import CountersignCore
import CountersignKit
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs the terminal's user in as a native app does (RFC 8252): the authorization code flow
/// with PKCE, the answer coming back to a listener on a loopback port chosen now (§7.3), and
/// the code exchanged by the public client's id alone. The person signs in in a browser —
/// opened here when it can be, or wherever they paste the printed URL — by approving on a phone
/// already enrolled.
struct NativeAppSignIn {
    /// What the terminal's side got wrong (the browser never came back).
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The tenant's issuer: its base URL.
    let server: URL
    let clientID: String
    let scope: String
    let transport: any HTTPTransport
    /// How long to wait for the browser.
    var timeout: Duration = .seconds(300)

    /// Runs the flow (`NativeSignIn`, the SDK's), handing the URL to open to `present`; returns
    /// the access token. A failure to reach the server is described in words (`ConnectionFailure`).
    func accessToken(present: (URL) -> Void) async throws -> String {
        let signIn = NativeSignIn(server: server, clientID: clientID, scope: scope, transport: transport)
        let receiver = try await LoopbackReceiver.start()
        defer { receiver.stop() }
        let attempt = try await reaching { try await signIn.begin(redirectURI: "http://127.0.0.1:\(receiver.port)/callback") }
        present(attempt.url)
        let callback = try await receiver.callback(within: timeout)
        guard let answer = URL(string: callback) else {
            throw Failure(description: "the browser came back to \(callback), which is not a URL")
        }
        return try await reaching { try await signIn.accessToken(from: answer, for: attempt) }
    }

    /// `body`'s result; an error other than the provider's (`NativeSignIn.Failure`) is the
    /// transport's, and is described as failing to reach the server.
    private func reaching<Result>(_ body: () async throws -> Result) async throws -> Result {
        do { return try await body() } catch let failure as NativeSignIn.Failure {
            throw failure
        } catch {
            throw ConnectionFailure(server: server.absoluteString, error: error)
        }
    }
}

/// A one-shot HTTP listener on 127.0.0.1 and a port the system picks, for the browser's
/// redirect: the first `GET /callback` is answered with a page saying the terminal takes over,
/// and its URI is handed to whoever waits. Anything else is 404.
final class LoopbackReceiver: Sendable {
    let port: Int
    private let channel: any Channel
    private let received: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    private init(channel: any Channel, received: AsyncStream<String>, continuation: AsyncStream<String>.Continuation) {
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
        self.received = received
        self.continuation = continuation
    }

    static func start() async throws -> LoopbackReceiver {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(1))
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(CallbackHandler(continuation: continuation))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return LoopbackReceiver(channel: channel, received: stream, continuation: continuation)
    }

    /// The callback's URI (path and query), or a failure after `timeout`.
    func callback(within timeout: Duration) async throws -> String {
        try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { [received] in
                for await uri in received { return uri }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let uri = try await group.next() ?? nil else {
                throw NativeAppSignIn.Failure(description: "no answer came back from the browser in time")
            }
            return uri
        }
    }

    func stop() {
        continuation.finish()
        channel.close(promise: nil)
    }

    private final class CallbackHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let continuation: AsyncStream<String>.Continuation

        init(continuation: AsyncStream<String>.Continuation) { self.continuation = continuation }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data) else { return }
            let isCallback = head.method == .GET && head.uri.split(separator: "?").first == "/callback"
            let page = isCallback ? LoopbackCallbackPage.html(forCallback: head.uri) : LoopbackCallbackPage.notFound
            var headers = HTTPHeaders([("Content-Type", "text/html; charset=utf-8"), ("Connection", "close"),
                                       ("Content-Length", String(page.utf8.count)), ("Cache-Control", "no-store")])
            headers.add(name: "Referrer-Policy", value: "no-referrer")
            headers.add(name: "Content-Security-Policy", value: LoopbackCallbackPage.contentSecurityPolicy)
            headers.add(name: "X-Content-Type-Options", value: "nosniff")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(
                version: head.version, status: isCallback ? .ok : .notFound, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: page)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
            if isCallback { continuation.yield(head.uri) }
        }
    }
}

/// Opens a URL in the desktop's browser where there is one (`xdg-open`, `open` on macOS); the
/// URL is printed either way, so a terminal without a desktop loses nothing.
enum Browser {
    static func open(_ url: URL) {
        #if os(macOS)
        let candidates = ["/usr/bin/open"]
        #else
        let candidates = ["/usr/bin/xdg-open", "/usr/local/bin/xdg-open"]
        #endif
        guard let opener = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [url.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
