import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// The one HTTP client of every call to an endpoint a tenant or client registered (webhooks, CIBA
/// ping and push callbacks): HTTP/1.1, the system's trust roots, redirects
/// never followed (a receiver that moved is told to fix its URL, and the signed body is not
/// handed to wherever a redirect points), answers read up to `maximumAnswerSize` bytes.
///
/// The client is made at the first call, so a server that never calls a webhook holds no
/// connection pool, and is shut down with the server: an AsyncHTTPClient client released
/// without a shutdown stops the process.
final class WebhookHTTPClient: Sendable {
    static let maximumAnswerSize = 16 * 1024

    private enum State {
        case idle
        case running(HTTPClient)
        case closed
    }

    private let state = Mutex(State.idle)

    /// What the receiver answered.
    struct Answer: Sendable {
        let status: Int
        /// nil when the body is larger than `maximumAnswerSize`: an event receiver's status
        /// still counts, a verifier's verdict cannot be read.
        let body: Data?
    }

    /// Posts `body` as JSON, signed with `target`'s secret, and reads the whole answer within
    /// `timeout` — connecting, sending, waiting and reading included.
    func post(_ body: Data, to target: WebhookTarget, event: String, deliveryID: String, at date: Date,
              timeout: Duration) async throws(WebhookCallError) -> Answer {
        try await post(body, url: target.url, headers: [
            ("User-Agent", "Countersign-Webhook/1"),
            (WebhookSignature.eventHeader, event),
            (WebhookSignature.deliveryHeader, deliveryID),
            (WebhookSignature.signatureHeader, WebhookSignature.sign(body: body, secret: target.secret, at: date)),
        ], timeout: timeout)
    }

    /// Posts `body` (JSON unless `contentType` says otherwise) to `url` with `headers` — the
    /// webhooks' signed calls, the CIBA ping and push callbacks with their bearer token, and
    /// Security Event Tokens — and reads the whole answer within `timeout`.
    func post(_ body: Data, url: String, headers: [(String, String)], contentType: String = "application/json",
              timeout: Duration) async throws(WebhookCallError) -> Answer {
        let client = try self.client()
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(data: body))
        let (seconds, attoseconds) = timeout.components
        let deadline = NIODeadline.now() + .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let exchange = request
        do {
            // AsyncHTTPClient's deadline stops at the answer's head; the race bounds the body too.
            return try await withThrowingTaskGroup(of: Answer.self) { group in
                group.addTask {
                    let response = try await client.execute(exchange, deadline: deadline)
                    do {
                        let buffer = try await response.body.collect(upTo: Self.maximumAnswerSize)
                        return Answer(status: Int(response.status.code), body: Data(buffer.readableBytesView))
                    } catch is NIOTooManyBytesError {
                        return Answer(status: Int(response.status.code), body: nil)
                    }
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw WebhookCallError.timedOut(timeout)
                }
                defer { group.cancelAll() }
                guard let answer = try await group.next() else { throw WebhookCallError.timedOut(timeout) }
                return answer
            }
        } catch let error as WebhookCallError {
            throw error
        } catch let error as HTTPClientError
            where [.deadlineExceeded, .connectTimeout, .readTimeout, .tlsHandshakeTimeout].contains(error) {
            throw .timedOut(timeout)
        } catch {
            throw .unreachable(String(describing: error))
        }
    }

    private func client() throws(WebhookCallError) -> HTTPClient {
        let client: HTTPClient? = state.withLock { state in
            switch state {
            case .running(let client):
                return client
            case .closed:
                return nil
            case .idle:
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.minimumTLSVersion = .tlsv12
                var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
                configuration.httpVersion = .http1Only
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
                state = .running(client)
                return client
            }
        }
        guard let client else { throw .shuttingDown }
        return client
    }

    /// Closes the connections; later calls fail with `shuttingDown`.
    func shutdown() async {
        let client: HTTPClient? = state.withLock { state in
            defer { state = .closed }
            if case .running(let client) = state { return client }
            return nil
        }
        try? await client?.shutdown()
    }
}

/// Why a webhook call got no usable answer. The descriptions name neither the URL (it may carry
/// a token of the receiver's) nor the secret; they become `last_error` and log lines.
enum WebhookCallError: Error, Sendable, Equatable, CustomStringConvertible {
    case timedOut(Duration)
    case unreachable(String)
    case shuttingDown

    var description: String {
        switch self {
        case .timedOut(let timeout): "no complete answer within \(timeout)"
        case .unreachable(let why): "the receiver could not be reached: \(why)"
        case .shuttingDown: "the server is shutting down"
        }
    }
}
