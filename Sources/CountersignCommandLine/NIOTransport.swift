import AsyncHTTPClient
import CountersignKit
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An `HTTPTransport` over SwiftNIO (AsyncHTTPClient): keep-alive connections on event loops.
/// `countersign-bench` drives its simulated devices and its relying party through it, so that
/// the load generator costs little next to the server it measures (`--http-client urlsession`
/// measures the SDK's default transport instead); `ciba auth` uses it because Linux URLSession
/// never completes a request answered 401 with a Basic challenge.
///
/// Redirects are not followed (every device request is signed for one exact URL).
package final class NIOTransport: HTTPTransport {
    private let client: HTTPClient

    /// `connections`: the most connections kept to one host. Every live stream holds one, and
    /// every request in flight needs one more. `retryingRefusedConnections`: whether a request
    /// whose connection fails waits, up to its timeout, for another attempt to connect (a load
    /// generator's requests should); when false it fails at once, for a command that tells the
    /// user the server is unreachable and tries again itself.
    package init(connections: Int, retryingRefusedConnections: Bool = true) {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        configuration.connectionPool.retryConnectionEstablishment = retryingRefusedConnections
        configuration.httpVersion = .http1Only
        configuration.decompression = .disabled
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    package func shutdown() async throws {
        try await client.shutdown()
    }

    package func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (url, prepared) = try Self.prepare(request)
        let response = try await client.execute(prepared, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        return (Data(body.readableBytesView), try Self.head(response, url: url))
    }

    package func stream(_ request: URLRequest) async throws -> StreamedResponse {
        let (url, prepared) = try Self.prepare(request)
        let (body, pieces) = AsyncThrowingStream.makeStream(of: Data.self)
        let head = Slot<CheckedContinuation<HTTPURLResponse, any Error>>()
        let client = self.client
        let reader = Slot<Task<Void, Never>>()
        let response = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                head.put(continuation)
                let task = Task {
                    do {
                        let response = try await client.execute(prepared, timeout: .seconds(30))
                        let answer = try Self.head(response, url: url)
                        head.take()?.resume(returning: answer)
                        for try await buffer in response.body {
                            pieces.yield(Data(buffer.readableBytesView))
                        }
                        pieces.finish()
                    } catch {
                        if let waiting = head.take() {
                            waiting.resume(throwing: error)
                        } else {
                            pieces.finish(throwing: error)
                        }
                    }
                }
                reader.put(task)
                pieces.onTermination = { _ in task.cancel() }
            }
        } onCancel: {
            reader.take()?.cancel()
        }
        return StreamedResponse(response: response, body: body)
    }

    private static func prepare(_ request: URLRequest) throws -> (URL, HTTPClientRequest) {
        guard let url = request.url else { throw URLError(.badURL) }
        var prepared = HTTPClientRequest(url: url.absoluteString)
        prepared.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            prepared.headers.add(name: name, value: value)
        }
        if let body = request.httpBody {
            prepared.body = .bytes(ByteBuffer(bytes: body))
        }
        return (url, prepared)
    }

    private static func head(_ response: HTTPClientResponse, url: URL) throws -> HTTPURLResponse {
        var fields: [String: String] = [:]
        for header in response.headers {
            fields[header.name] = fields[header.name].map { "\($0), \(header.value)" } ?? header.value
        }
        guard let answer = HTTPURLResponse(
            url: url, statusCode: Int(response.status.code), httpVersion: "HTTP/1.1", headerFields: fields) else {
            throw URLError(.badServerResponse)
        }
        return answer
    }
}

/// One value handed between tasks.
private final class Slot<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)

    func put(_ newValue: Value) {
        value.withLock { $0 = newValue }
    }

    func take() -> Value? {
        value.withLock { $0.take() }
    }
}
