import CountersignCore
import Foundation

/// What the live stream of one enrollment reports.
///
/// ```swift
/// switch event {
/// case .request(let request): show(try await authenticator.details(for: request))
/// case .closed(let closed): dismiss(closed.id)   // answered elsewhere, or expired
/// case .notice(let notice): alert(notice.summary)  // offer "Not me": reportNotMe(notice)
/// }
/// ```
public enum LiveRequestEvent: Sendable, Equatable {
    /// A request waiting for an answer: one pending when the stream opened, or a new one.
    case request(ApprovalRequest)
    /// A request left the inbox: approved or denied (here or on another device) or expired.
    case closed(RequestClosed)
    /// Something was just done to the account (a device or passkey added, a recovery code or
    /// pass used): show `notice.summary` and offer "Not me" (`reportNotMe(_:)`). Sent once, when
    /// it happens; `notices(_:)` lists it for a week.
    case notice(SecurityNotice)
}

/// The live stream of one enrollment's requests (`CountersignAuthenticator.liveRequests(_:)`):
/// one connection, opened with a fresh device signature when iteration starts. It first reports
/// every pending request, then each change as the server sees it, and ends when the server ends
/// the connection (it does so every half hour or so; iterate a new one to go on listening). A
/// request the server reports twice on one connection is reported once.
///
/// Leaving the loop, or cancelling the task that iterates, closes the connection.
///
/// ```swift
/// do {
///     for try await event in authenticator.liveRequests(enrollment.id) { … }
/// } catch .deviceDeregistered, .userDeregistered, .userDisenrolled {
///     // The enrollment is gone; stop listening.
/// } catch {
///     // Wait a little, then listen again.
/// }
/// ```
public struct LiveRequests: AsyncSequence, Sendable {
    public typealias Element = LiveRequestEvent
    public typealias Failure = CountersignError

    let enrollmentID: Enrollment.ID
    /// Opens the connection and returns the body of the event stream.
    let connect: @Sendable () async throws(CountersignError) -> AsyncThrowingStream<Data, any Error>

    /// An iterator that connects on its first `next()`.
    ///
    /// ```swift
    /// var events = authenticator.liveRequests(enrollment.id).makeAsyncIterator()
    /// let first = try await events.next()
    /// ```
    public func makeAsyncIterator() -> Iterator {
        Iterator(enrollmentID: enrollmentID, connect: connect)
    }

    /// Reads events off the connection as the loop asks for them; see `makeAsyncIterator()`.
    ///
    /// `Sendable`, so that a loop in any isolation may call `next()`, whether or not the
    /// platform's library has `next(isolation:)` (Swift 6's; iOS 17 and macOS 14 do not).
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        private enum State: Sendable {
            case idle(@Sendable () async throws(CountersignError) -> AsyncThrowingStream<Data, any Error>)
            case open(Pieces)
            case ended
        }

        private let enrollmentID: Enrollment.ID
        private var state: State
        private var parser = ServerSentEventParser()
        private var ready: [LiveRequestEvent] = []
        private var announced: Set<String> = []

        init(
            enrollmentID: Enrollment.ID,
            connect: @escaping @Sendable () async throws(CountersignError) -> AsyncThrowingStream<Data, any Error>
        ) {
            self.enrollmentID = enrollmentID
            self.state = .idle(connect)
        }

        /// The next event; nil once the server has ended the stream or the task is cancelled.
        ///
        /// ```swift
        /// while let event = try await events.next() { … }
        /// ```
        public mutating func next() async throws(CountersignError) -> LiveRequestEvent? {
            while ready.isEmpty {
                let piece: Data?
                do throws(CountersignError) {
                    piece = try await nextPiece()
                } catch {
                    state = .ended
                    throw error
                }
                guard let piece else {
                    state = .ended
                    return nil
                }
                for event in parser.feed(piece) {
                    do throws(CountersignError) {
                        if let event = try decode(event) { ready.append(event) }
                    } catch {
                        state = .ended
                        throw error
                    }
                }
            }
            return ready.removeFirst()
        }

        /// `next()`, as `for try await` calls it where the library has it.
        ///
        /// ```swift
        /// let event = try await events.next(isolation: #isolation)
        /// ```
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CountersignError) -> LiveRequestEvent? {
            try await next()
        }

        private mutating func nextPiece() async throws(CountersignError) -> Data? {
            switch state {
            case .ended:
                return nil
            case .idle(let connect):
                state = .open(Pieces(try await connect().makeAsyncIterator()))
                return try await nextPiece()
            case .open(let body):
                do { return try await body.next() } catch {
                    throw CountersignError(transportFailure: error)
                }
            }
        }

        /// The event a Server-Sent Event stands for; nil for one of a type this version does not
        /// know, and for a request already reported.
        private mutating func decode(_ event: ServerSentEvent) throws(CountersignError) -> LiveRequestEvent? {
            let data = Data(event.data.utf8)
            switch event.type {
            case RequestStreamEvent.request:
                let envelope = try Self.decode(PendingRequestEnvelope.self, from: data, event: event.type)
                guard announced.insert(envelope.id).inserted else { return nil }
                return .request(ApprovalRequest(enrollmentID: enrollmentID, envelope: envelope))
            case RequestStreamEvent.closed:
                let closed = try Self.decode(RequestClosed.self, from: data, event: event.type)
                announced.remove(closed.id)
                return .closed(closed)
            case RequestStreamEvent.notice:
                let item = try Self.decode(SecurityNoticeList.Item.self, from: data, event: event.type)
                return .notice(SecurityNotice(item, enrollmentID: enrollmentID))
            default:
                return nil
            }
        }

        /// The body's iterator, shared by the copies of one `Iterator`. `AsyncThrowingStream`'s
        /// iterator is not `Sendable`; this holder is, because the stream allows one reader at a
        /// time (a second concurrent `next()` stops the program, as does an overlapping access
        /// to `base`), so no two tasks ever reach `base` together.
        private final class Pieces: @unchecked Sendable {
            private var base: AsyncThrowingStream<Data, any Error>.AsyncIterator

            init(_ base: AsyncThrowingStream<Data, any Error>.AsyncIterator) {
                self.base = base
            }

            func next() async throws -> Data? {
                try await base.next()
            }
        }

        private static func decode<Value: Decodable>(
            _ type: Value.Type, from data: Data, event: String
        ) throws(CountersignError) -> Value {
            do { return try Timestamps.decoder().decode(type, from: data) } catch {
                throw .invalidServerResponse("a \(event) event of the live stream could not be decoded")
            }
        }
    }
}
