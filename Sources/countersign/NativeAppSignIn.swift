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

    /// Runs the flow, handing the URL to open to `present`; returns the access token.
    func accessToken(present: (URL) -> Void) async throws -> String {
        let metadata = try await discover()
        let receiver = try await LoopbackReceiver.start()
        defer { receiver.stop() }
        let verifier = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64URLEncodedString
        let challenge = Data(SHA256.hash(data: Data(verifier.utf8))).base64URLEncodedString
        let state = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64URLEncodedString
        let redirectURI = "http://127.0.0.1:\(receiver.port)/callback"
        var components = try require(URLComponents(string: metadata.authorizationEndpoint), "authorization_endpoint is not a URL")
        components.percentEncodedQuery = RelyingPartyClient.formEncoded([
            "response_type": "code", "client_id": clientID, "redirect_uri": redirectURI, "scope": scope, "state": state,
            "code_challenge": challenge, "code_challenge_method": "S256",
        ])
        present(try require(components.url, "the authorization URL could not be built"))

        let callback = try await receiver.callback(within: timeout)
        var answer: [String: String] = [:]
        for item in URLComponents(string: callback)?.queryItems ?? [] { answer[item.name] = item.value ?? "" }
        guard answer["state"] == state else { throw Failure(description: "the answer's state is not this sign-in's; nothing was exchanged") }
        // RFC 9207: the answer names the issuer that gave it.
        guard answer["iss"] == metadata.issuer else {
            throw Failure(description: "the answer came from \(answer["iss"] ?? "an unnamed issuer"), not \(metadata.issuer)")
        }
        if let error = answer["error"] {
            throw Failure(description: "sign-in failed: \(error)\(answer["error_description"].map { ": \($0)" } ?? "")")
        }
        let code = try require(answer["code"], "the answer holds neither a code nor an error")
        return try await exchange(code, verifier: verifier, redirectURI: redirectURI, at: metadata.tokenEndpoint)
    }

    private struct Metadata: Decodable {
        let issuer: String
        let authorizationEndpoint: String
        let tokenEndpoint: String

        enum CodingKeys: String, CodingKey {
            case issuer
            case authorizationEndpoint = "authorization_endpoint"
            case tokenEndpoint = "token_endpoint"
        }
    }

    /// The provider's metadata, whose issuer must be the server named (Discovery §4.3).
    private func discover() async throws -> Metadata {
        let url = server.appendingPathComponent(".well-known/openid-configuration")
        let (data, response) = try await send(URLRequest(url: url))
        guard response.statusCode == 200, let metadata = try? JSONDecoder().decode(Metadata.self, from: data) else {
            throw Failure(description: "\(url.absoluteString) answered \(response.statusCode), not OpenID Provider metadata")
        }
        guard metadata.issuer == server.absoluteString else {
            throw Failure(description: "the metadata names the issuer \(metadata.issuer), not \(server.absoluteString)")
        }
        return metadata
    }

    private func exchange(_ code: String, verifier: String, redirectURI: String, at endpoint: String) async throws -> String {
        var request = URLRequest(url: try require(URL(string: endpoint), "token_endpoint is not a URL"))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(RelyingPartyClient.formEncoded([
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI, "code_verifier": verifier,
            "client_id": clientID,
        ]).utf8)
        let (data, response) = try await send(request)
        let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        guard response.statusCode == 200, let token = body?["access_token"] as? String else {
            let error = body?["error"] as? String ?? "HTTP \(response.statusCode)"
            throw Failure(description: "the token endpoint refused the code: \(error)\((body?["error_description"] as? String).map { ": \($0)" } ?? "")")
        }
        return token
    }

    /// The transport's answer; its failure described in words (`ConnectionFailure`).
    private func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        do { return try await transport.send(request) } catch {
            throw ConnectionFailure(server: server.absoluteString, error: error)
        }
    }

    private func require<T>(_ value: T?, _ why: String) throws -> T {
        guard let value else { throw Failure(description: why) }
        return value
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
