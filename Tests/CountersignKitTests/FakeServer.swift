import Foundation
import Synchronization
@testable import CountersignKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An `HTTPTransport` that answers from a table instead of a network, and remembers what it
/// was sent.
final class FakeServer: HTTPTransport, Sendable {
    struct Answer: Sendable {
        var status: Int
        var contentType: String
        var body: Data
        /// For `stream(_:)`: the body is delivered in pieces of this size.
        var pieceSize: Int
        /// For `stream(_:)`: the body does not end after its last piece.
        var staysOpen: Bool

        static func json(_ status: Int, _ text: String) -> Answer {
            Answer(status: status, contentType: "application/json", body: Data(text.utf8), pieceSize: .max, staysOpen: false)
        }

        static func eventStream(_ text: String, pieceSize: Int = 5, staysOpen: Bool = false) -> Answer {
            Answer(status: 200, contentType: "text/event-stream", body: Data(text.utf8), pieceSize: pieceSize,
                   staysOpen: staysOpen)
        }
    }

    private let answer: @Sendable (URLRequest) -> Answer
    private let sent = Mutex<[URLRequest]>([])
    private let streamsEnded = Mutex(0)

    init(_ answer: @escaping @Sendable (URLRequest) -> Answer) {
        self.answer = answer
    }

    /// Every request received, in order.
    var requests: [URLRequest] { sent.withLock { $0 } }
    /// How many streamed bodies have ended, whether the server ended them or the reader did.
    var endedStreams: Int { streamsEnded.withLock { $0 } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let answer = record(request)
        return (answer.body, response(answer, for: request))
    }

    func stream(_ request: URLRequest) async throws -> StreamedResponse {
        let answer = record(request)
        let (body, pieces) = AsyncThrowingStream.makeStream(of: Data.self)
        pieces.onTermination = { _ in self.streamsEnded.withLock { $0 += 1 } }
        var start = answer.body.startIndex
        while start < answer.body.endIndex {
            let end = answer.body.index(start, offsetBy: min(answer.pieceSize, answer.body.endIndex - start))
            pieces.yield(answer.body[start..<end])
            start = end
        }
        if !answer.staysOpen { pieces.finish() }
        return StreamedResponse(response: response(answer, for: request), body: body)
    }

    private func record(_ request: URLRequest) -> Answer {
        sent.withLock { $0.append(request) }
        return answer(request)
    }

    private func response(_ answer: Answer, for request: URLRequest) -> HTTPURLResponse {
        HTTPURLResponse(
            url: request.url!, statusCode: answer.status, httpVersion: "HTTP/1.1",
            headerFields: ["Content-Type": answer.contentType])!
    }
}
