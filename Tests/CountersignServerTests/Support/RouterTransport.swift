import CountersignKit
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
