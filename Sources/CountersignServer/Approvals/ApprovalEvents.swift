import CountersignCore
import Foundation
import Synchronization

/// Wakes the live streams of connected devices: a new request sealed for a device, a request
/// that left its inbox, or a security notice for the device's user. In-process; each node
/// delivers to the streams it holds.
public final class ApprovalEvents: Sendable {
    public enum Event: Sendable, Equatable {
        case request(PendingRequestEnvelope)
        case closed(RequestClosed)
        case notice(SecurityNoticeList.Item)
    }

    /// Events a stream may fall behind by before the oldest are dropped; the device's inbox
    /// still holds every pending request, so a slow stream loses nothing for good.
    static let bufferLimit = 256

    private let streams = Mutex<[String: [UUID: AsyncStream<Event>.Continuation]]>([:])
    /// Set by `finishAll`: a stream opened while the server stops ends at once.
    private let closed = Mutex(false)

    public init() {}

    /// A stream of the events for `deviceID`, open until the returned stream is dropped or
    /// `finish` is called.
    public func subscribe(deviceID: String) -> AsyncStream<Event> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(Self.bufferLimit))
        continuation.onTermination = { [weak self] _ in
            self?.streams.withLock { streams in
                streams[deviceID]?[id] = nil
                if streams[deviceID]?.isEmpty == true { streams[deviceID] = nil }
            }
        }
        let open = closed.withLock { closed in
            guard !closed else { return false }
            streams.withLock { $0[deviceID, default: [:]][id] = continuation }
            return true
        }
        if !open { continuation.finish() }
        return stream
    }

    public func publish(_ event: Event, to deviceID: String) {
        let targets = streams.withLock { $0[deviceID].map { Array($0.values) } ?? [] }
        for continuation in targets { continuation.yield(event) }
    }

    /// Ends every stream (at shutdown, so that open responses complete).
    public func finishAll() {
        closed.withLock { $0 = true }
        let all = streams.withLock { streams in
            defer { streams = [:] }
            return streams.values.flatMap(\.values)
        }
        for continuation in all { continuation.finish() }
    }

    /// Whether the server is stopping: waits in flight end rather than hold the server up.
    public var isClosed: Bool { closed.withLock { $0 } }

    /// Whether a stream for `deviceID` is open on this node.
    public func hasSubscribers(deviceID: String) -> Bool {
        streams.withLock { $0[deviceID] != nil }
    }

    /// How many streams are open.
    public var subscriberCount: Int { streams.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}
