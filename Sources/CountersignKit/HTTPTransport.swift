import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one HTTP request and returns the answer, whatever its status.
///
/// `URLSessionTransport` is the one to use; the protocol exists so an app can route requests
/// through its own networking stack (certificate pinning, a proxy, metrics). On Linux, a process
/// holding more than about a thousand open descriptors should bring its own transport too:
/// FoundationNetworking watches its sockets with `select`, which cannot see a descriptor
/// numbered 1024 or above, and a request on one never completes.
///
/// ```swift
/// let authenticator = CountersignAuthenticator(
///     keyStore: store, transport: URLSessionTransport(session: myPinnedSession))
/// ```
///
/// An implementation must not follow redirects: every device request is signed for one exact
/// URL, and a redirected request would carry that signature to another one.
public protocol HTTPTransport: Sendable {
    /// Throws only when no HTTP answer was received (`URLError` for network failures).
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)

    /// Sends one request whose answer is read as it arrives, as the live stream of requests
    /// needs. Returns once the status and headers are in; the body then yields each piece as it
    /// is received and finishes when the server ends the answer, or throws when the connection
    /// fails. Ending the iteration of the body (leaving the loop, cancelling the task that
    /// reads it) must cancel the request.
    ///
    /// The default implementation sends the request with `send(_:)` and yields the whole body
    /// once the server has ended it: correct, but not live. A transport that carries the live
    /// stream implements this method.
    ///
    /// ```swift
    /// let answer = try await transport.stream(request)
    /// for try await piece in answer.body { parser.feed(piece) }
    /// ```
    func stream(_ request: URLRequest) async throws -> StreamedResponse
}

/// The status and headers of an answer, and its body as it arrives.
///
/// ```swift
/// let answer = try await transport.stream(request)
/// guard answer.response.statusCode == 200 else { … }
/// for try await piece in answer.body { … }
/// ```
public struct StreamedResponse: Sendable {
    public let response: HTTPURLResponse
    /// The pieces of the body in order, as they arrive.
    public let body: AsyncThrowingStream<Data, any Error>

    public init(response: HTTPURLResponse, body: AsyncThrowingStream<Data, any Error>) {
        self.response = response
        self.body = body
    }
}

extension HTTPTransport {
    /// Sends the request with `send(_:)` and yields its whole body at once, when the server has
    /// ended it.
    ///
    /// ```swift
    /// let answer = try await metricsTransport.stream(request)   // a transport with only `send`
    /// ```
    public func stream(_ request: URLRequest) async throws -> StreamedResponse {
        let (data, response) = try await send(request)
        return StreamedResponse(response: response, body: AsyncThrowingStream { body in
            body.yield(data)
            body.finish()
        })
    }
}

/// An `HTTPTransport` over `URLSession`.
///
/// ```swift
/// let transport = URLSessionTransport()
/// let (body, response) = try await transport.send(URLRequest(url: url))
/// ```
///
/// A streamed request (`stream(_:)`) runs in a session of its own, made with the configuration
/// of `session` and a delegate that reads the body as it arrives and refuses redirects. The
/// delegate of `session` takes no part in it: an app that evaluates server trust in its
/// session's delegate implements `stream(_:)` in a transport of its own.
public struct URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// A transport over an ephemeral session (no cookies, no cache) that refuses redirects.
    public init() {
        self.session = Self.defaultSession
    }

    /// A transport over `session`, which should refuse redirects (see `HTTPTransport`).
    public init(session: URLSession) {
        self.session = session
    }

    private static let defaultSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        return URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
    }()

    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return (data, http)
    }

    /// Streams with a `URLSessionDataDelegate`, since `URLSession.bytes(for:)` is not available
    /// on every platform this package supports.
    ///
    /// ```swift
    /// let answer = try await URLSessionTransport().stream(URLRequest(url: streamURL))
    /// for try await piece in answer.body { … }   // leaving the loop cancels the request
    /// ```
    public func stream(_ request: URLRequest) async throws -> StreamedResponse {
        let (body, pieces) = AsyncThrowingStream.makeStream(of: Data.self)
        let reader = StreamingTaskDelegate(body: pieces)
        // The session keeps its delegate until it is invalidated, which the delegate does when
        // the task completes.
        let streamingSession = URLSession(configuration: session.configuration, delegate: reader, delegateQueue: nil)
        let task = streamingSession.dataTask(with: request)
        pieces.onTermination = { _ in task.cancel() }
        let response = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { head in
                reader.awaitHead(head)
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        return StreamedResponse(response: response, body: body)
    }
}

/// Hands a redirect back to the caller as the 3xx response it is, instead of following it.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
