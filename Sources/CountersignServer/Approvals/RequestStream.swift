import CountersignCore
import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// A device's live stream (`GET /device/v1/requests/stream`): Server-Sent Events carrying every
/// pending request when it opens, then each new request sealed for the device and each request
/// that leaves its inbox — answered (within milliseconds of the change on this node, or via
/// the cluster relay) or expired (when the clock passes its expiry) — and each security notice
/// made for the device's user once it is committed (`LiveNotices`). A comment line every
/// `liveStreamKeepalive` (15 seconds) keeps proxies from closing an idle connection. The stream
/// ends after `maximumDuration`, so that a device removed meanwhile does not keep listening;
/// the device reconnects with a fresh signature. It ends at once when its device closes the
/// connection (`clientGone`), not at the next write that fails.
struct RequestStream: Sendable {
    static let maximumDuration: Duration = .seconds(1800)

    let events: ApprovalEvents
    /// How often an idle stream sends a keepalive comment.
    let keepalive: Duration
    let metrics: ServerMetrics
    let now: @Sendable () -> Date
    let approvals: ApprovalService
    let device: Device
    /// Succeeds when the device has closed the connection; nil where that cannot be told.
    let clientGone: EventLoopFuture<Void>?

    func response() -> Response {
        // Subscribe before reading the inbox, so that a request created in between is not
        // missed (it may arrive twice; devices key requests by id).
        let subscription = events.subscribe(deviceID: device.id)
        let shown = ShownRequests()
        let keepalive = keepalive
        let metrics = metrics
        let now = now
        let approvals = approvals
        let device = device
        let clientGone = clientGone
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store", .init("X-Accel-Buffering")!: "no"],
            body: ResponseBody { writer in
                let gauge = metrics.liveStreams
                gauge.increment()
                defer { gauge.decrement() }
                let (lines, output) = AsyncStream.makeStream(of: ByteBuffer.self)
                // Ending the lines ends the stream; finishing twice is harmless.
                clientGone?.whenSuccess { output.finish() }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for envelope in try await approvals.inbox(for: device).reversed() {
                            shown.add(envelope)
                            output.yield(try Self.frame(RequestStreamEvent.request, envelope))
                        }
                        for await event in subscription {
                            switch event {
                            case .request(let envelope):
                                shown.add(envelope)
                                output.yield(try Self.frame(RequestStreamEvent.request, envelope))
                            case .closed(let closed):
                                // Sent once: an expiry notice may already have gone out.
                                guard shown.remove(closed.id) else { continue }
                                output.yield(try Self.frame(RequestStreamEvent.closed, closed))
                            case .notice(let notice):
                                output.yield(try Self.frame(RequestStreamEvent.notice, notice))
                            }
                        }
                        output.finish()
                    }
                    group.addTask {
                        // Wakes for the next keepalive, or for the next expiry if sooner.
                        let clock = ContinuousClock()
                        let end = clock.now.advanced(by: Self.maximumDuration)
                        var nextKeepalive = clock.now.advanced(by: keepalive)
                        while clock.now < end {
                            var wake = min(nextKeepalive, end)
                            if let expiry = shown.earliestExpiry() {
                                let left = max(0, expiry.timeIntervalSince(now()))
                                wake = min(wake, clock.now.advanced(by: .milliseconds(Int64((left * 1000).rounded(.up)))))
                            }
                            try await Task.sleep(until: wake, clock: clock)
                            for id in shown.removeExpired(at: now()) {
                                output.yield(try Self.frame(RequestStreamEvent.closed, RequestClosed(id: id, status: "expired")))
                            }
                            if clock.now >= nextKeepalive {
                                output.yield(ByteBuffer(string: ": keepalive\n\n"))
                                nextKeepalive = clock.now.advanced(by: keepalive)
                            }
                        }
                        output.finish()
                    }
                    // Written from this task only: the writer is not shared.
                    try await writer.write(ByteBuffer(string: ": connected\n\n"))
                    for await line in lines {
                        try await writer.write(line)
                    }
                    group.cancelAll()
                }
                try await writer.finish(nil)
            })
    }

    private static func frame(_ event: String, _ value: some Encodable) throws -> ByteBuffer {
        // JSON from our encoder has no raw newlines, so one `data:` line carries it.
        ByteBuffer(string: "event: \(event)\ndata: \(String(decoding: try JSON.encode(value), as: UTF8.self))\n\n")
    }
}

/// The requests a stream has shown and not yet closed, with their expiry.
private final class ShownRequests: Sendable {
    private let requests = Mutex<[String: Date]>([:])

    func add(_ envelope: PendingRequestEnvelope) {
        requests.withLock { $0[envelope.id] = envelope.expiresAt }
    }

    /// Whether the request was open (and is now closed).
    func remove(_ id: String) -> Bool {
        requests.withLock { $0.removeValue(forKey: id) != nil }
    }

    func earliestExpiry() -> Date? {
        requests.withLock { $0.values.min() }
    }

    /// The requests past their expiry at `now`, removed.
    func removeExpired(at now: Date) -> [String] {
        requests.withLock { requests in
            let expired = requests.filter { $0.value <= now }.map(\.key).sorted()
            for id in expired { requests[id] = nil }
            return expired
        }
    }
}
