import CountersignKit
import Testing
import Foundation
import HummingbirdTesting
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK's transport for a server whose router is driven in memory (`TestServer.routed`):
/// each request goes to the router as it would arrive over HTTP, signed for the server's public
/// URL. Answers come whole, so a live stream of requests needs a listening server.
struct RouterTransport: HTTPTransport {
    let client: any TestClientProtocol
    let base: String

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        guard let url = request.url, url.absoluteString.hasPrefix(base) else { throw URLError(.unsupportedURL) }
        let answer = try await TestServer.route(request, path: String(url.absoluteString.dropFirst(base.count)), through: client)
        guard let response = HTTPURLResponse(
            url: url, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: answer.headers) else {
            throw URLError(.badServerResponse)
        }
        return (answer.data, response)
    }
}

/// The SDK's transport for a listening server: URLSession, with every answer from the server
/// held to the OpenAPI document as `TestServer`'s own calls are (the live stream excepted).
struct ContractCheckedTransport: HTTPTransport {
    let base: String
    private let session = URLSessionTransport()

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.send(request)
        if let url = request.url?.absoluteString, url.hasPrefix(base), response.url?.path == request.url?.path {
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name] = value }
            }
            OpenAPIContract.shared.check(method: request.httpMethod ?? "GET", path: String(url.dropFirst(base.count)),
                                         status: response.statusCode, headers: headers, body: data)
        }
        return (data, response)
    }

    /// The live stream, unchecked: its body is a stream of events, not a document.
    func stream(_ request: URLRequest) async throws -> StreamedResponse {
        try await session.stream(request)
    }
}
