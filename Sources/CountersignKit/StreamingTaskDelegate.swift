import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate of one streamed request (`URLSessionTransport.stream(_:)`): hands the status and
/// headers to the caller waiting for them, then each piece of the body to the body's stream as
/// it arrives, and the end of the answer — or its failure — to both. A redirect is not followed:
/// it arrives as the 3xx answer it is.
final class StreamingTaskDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let body: AsyncThrowingStream<Data, any Error>.Continuation
    /// The caller waiting for the head; nil before it waits and once it has been answered.
    private let head = Locked<CheckedContinuation<HTTPURLResponse, any Error>?>(nil)

    init(body: AsyncThrowingStream<Data, any Error>.Continuation) {
        self.body = body
    }

    /// Registers the caller waiting for the head. Called before the task is resumed, so no
    /// callback can come first.
    func awaitHead(_ continuation: CheckedContinuation<HTTPURLResponse, any Error>) {
        head.withLock { $0 = continuation }
    }

    private func answerHead(_ result: Result<HTTPURLResponse, any Error>) {
        head.withLock { waiting in
            waiting?.resume(with: result)
            waiting = nil
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let http = response as? HTTPURLResponse else {
            answerHead(.failure(URLError(.badServerResponse)))
            completionHandler(.cancel)
            return
        }
        answerHead(.success(http))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        body.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // A task that ends without an error has had its head answered already; this covers one
        // that failed before a head arrived.
        answerHead(.failure(error ?? URLError(.badServerResponse)))
        body.finish(throwing: error)
        session.finishTasksAndInvalidate()
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
