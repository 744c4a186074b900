import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// The server's own router, called from inside a request: the console sends each of its actions
/// to the administration API this way, and redeems its authorization code at the token
/// endpoint, so that a click in the console passes exactly the checks, rights, tenant isolation
/// and audit that the same call over HTTP passes. The router is installed once every route is
/// registered.
final class InProcessRouter: Sendable {
    private let responder = Mutex<RouterResponder<CountersignRequestContext>?>(nil)

    struct Answer: Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: Data

        /// The `error_description` of a refusal, or its `error` code.
        var errorDescription: String? {
            guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
            return (object["error_description"] as? String) ?? (object["error"] as? String)
        }
    }

    func install(_ router: Router<CountersignRequestContext>) {
        let built = router.buildResponder()
        responder.withLock { $0 = built }
    }

    /// Sends `method path` (path with its query) with `headers` and `body` to the router, as a
    /// request arriving on the same connection as `context`'s.
    func send(_ method: HTTPRequest.Method, _ path: String, headers: HTTPFields = [:], body: Data = Data(),
              as context: CountersignRequestContext) async throws -> Answer {
        guard let responder = responder.withLock({ $0 }) else { throw InProcessRouterError.notInstalled }
        let head = HTTPRequest(method: method, scheme: nil, authority: nil, path: path, headerFields: headers)
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer(data: body)))
        let inner = CountersignRequestContext(source: .init(channel: context.channel, logger: context.logger))
        let response = try await responder.respond(to: request, context: inner)
        let collected = CollectedBody()
        try await response.body.write(CollectingWriter(into: collected))
        return Answer(status: response.status, headers: response.headers, body: collected.data)
    }
}

enum InProcessRouterError: Error {
    case notInstalled
}

/// Where a response body collected in process ends up.
private final class CollectedBody: Sendable {
    private let buffer = Mutex(Data())
    var data: Data { buffer.withLock { $0 } }
    func append(_ part: ByteBuffer) { buffer.withLock { $0.append(contentsOf: part.readableBytesView) } }
}

private struct CollectingWriter: ResponseBodyWriter {
    let into: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws { into.append(buffer) }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
