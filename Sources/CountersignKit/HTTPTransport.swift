import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one HTTP request and returns the answer, whatever its status.
///
/// `URLSessionTransport` is the one to use; the protocol exists so an app can route requests
/// through its own networking stack (certificate pinning, a proxy, metrics).
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
}

/// An `HTTPTransport` over `URLSession`.
///
/// ```swift
/// let transport = URLSessionTransport()
/// let (body, response) = try await transport.send(URLRequest(url: url))
/// ```
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
