import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOSSL
import NIOTLS
import Synchronization

/// One notification as it goes on the wire: its HTTP/2 request headers (pseudo-headers first)
/// and its JSON body.
struct APNsWireRequest: Sendable {
    var headers: HPACKHeaders
    var body: ByteBuffer
}

/// What became of one stream: APNs' answer, or why there is none (the notification may be sent
/// again: a stream that got no answer was not delivered, or its outcome is unknown).
enum APNsWireResult: Sendable {
    case answered(status: Int, retryAfter: String?, body: ByteBuffer?)
    case unanswered(String)
}

/// A batch handed to a connection: every request is written, then the batch is flushed once;
/// `promise` completes when every stream has its result, in the order of `requests`.
struct APNsWireBatch: Sendable {
    let requests: [APNsWireRequest]
    let timeout: TimeAmount
    let promise: EventLoopPromise<[APNsWireResult]>
}

/// A connection that could be opened but is no APNs connection.
struct APNsConnectionRefused: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// Whether a connection still takes new streams, readable from any thread.
final class APNsConnectionState: Sendable {
    private let closing = Atomic<Bool>(false)
    var isClosing: Bool { closing.load(ordering: .acquiring) }
    func markClosing() { closing.store(true, ordering: .releasing) }
}

/// Drives an APNs connection at the level of HTTP/2 frames: each batch's requests become
/// streams written back to back and leave in one flush (one TLS record stream, one system
/// call), and each response completes its slot in the batch without a channel, pipeline or task
/// per stream. At tens of thousands of notifications a second these per-stream costs were most
/// of a sender's CPU.
///
/// A stream that is reset, refused by GOAWAY, cut off by the connection closing or left without
/// an answer past the batch's timeout completes as `unanswered`; the connection is then marked
/// closing (GOAWAY, stream ids running out) so that the next batch opens a new one.
final class APNsStreamsHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = APNsWireBatch
    typealias OutboundOut = HTTP2Frame

    /// The connection's receive window is handed back once this many response bytes arrived.
    static let windowUpdateThreshold = 32 * 1024
    /// Error bodies are a few dozen bytes; anything longer is cut.
    static let maximumBodyBytes = 64 * 1024
    /// The last client stream id HTTP/2 allows is 2^31 - 1; a connection stops taking batches
    /// well before, so that no batch runs out midway.
    static let lastStreamID = Int(Int32.max) - 2 * 100_000

    /// A batch under way: its results so far, and its timeout.
    private final class Pending {
        let promise: EventLoopPromise<[APNsWireResult]>
        var results: [APNsWireResult?]
        var remaining: Int
        var timeout: Scheduled<Void>?
        init(promise: EventLoopPromise<[APNsWireResult]>, count: Int) {
            self.promise = promise
            results = Array(repeating: nil, count: count)
            remaining = count
        }
    }

    private struct Slot {
        let batch: Pending
        let index: Int
        var status: Int?
        var retryAfter: String?
        var body: ByteBuffer?
    }

    private let state: APNsConnectionState
    /// Below the HTTP/2 handler: holds its flushes while a batch is written.
    private let flushes: APNsFlushCoalescer
    /// Completed once TLS has agreed on HTTP/2: the connection is then ready for batches.
    private let ready: EventLoopPromise<Void>
    private var isReady = false
    private var nextStreamID = 1
    private var open: [HTTP2StreamID: Slot] = [:]
    private var unacknowledgedBytes = 0
    private var isActive = true
    /// Set by an error or a GOAWAY: the connection takes no new batch and closes once its open
    /// streams have their results.
    private var draining = false
    /// The error that ended the connection, for the streams it leaves unanswered.
    private var failure: (any Error)?

    init(state: APNsConnectionState, flushes: APNsFlushCoalescer, ready: EventLoopPromise<Void>) {
        self.state = state
        self.flushes = flushes
        self.ready = ready
    }

    // MARK: Outbound: a batch becomes streams

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let batch = unwrapOutboundIn(data)
        promise?.succeed(())
        guard !batch.requests.isEmpty else {
            batch.promise.succeed([])
            return
        }
        guard isActive, !state.isClosing, nextStreamID + 2 * batch.requests.count <= Self.lastStreamID else {
            state.markClosing()
            batch.promise.succeed(Array(repeating: .unanswered("the connection to APNs is closing"), count: batch.requests.count))
            return
        }
        let pending = Pending(promise: batch.promise, count: batch.requests.count)
        // Each stream is flushed through the HTTP/2 handler as it is written, so that its DATA
        // leaves right after its HEADERS (the handler's flow-control buffer would otherwise emit
        // a batch's DATA frames in no set order, and APNs would finish the streams out of
        // order, which HTTP/2's stream map pays for); the flushes stop at the coalescer below,
        // and the batch reaches TLS and the socket in one flush at the end.
        flushes.hold()
        defer { flushes.release() }
        for (index, request) in batch.requests.enumerated() {
            let id = HTTP2StreamID(nextStreamID)
            nextStreamID += 2
            open[id] = Slot(batch: pending, index: index)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: request.headers)))),
                          promise: nil)
            // A stream the HTTP/2 layer cannot open or send fails this write, not the headers'
            // (which carries no promise, to spare an allocation per stream): both fail alike.
            let sent = context.eventLoop.makePromise(of: Void.self)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(request.body),
                                                                                         endStream: true)))),
                          promise: sent)
            context.flush()
            sent.futureResult.assumeIsolated().whenFailure { error in
                // Writes still pending fail when the connection closes: the cause is the
                // connection's error when there is one (a TLS handshake refused, say).
                let reason = self.failure.map { "APNs could not be reached: \($0)" } ?? "the stream could not be sent: \(error)"
                self.complete(id, with: .unanswered(reason), context: context)
            }
        }
        if nextStreamID > Self.lastStreamID - 2 * 100_000 { state.markClosing() }
        pending.timeout = context.eventLoop.assumeIsolated().scheduleTask(in: batch.timeout) {
            self.expire(pending, context: context)
        }
    }

    // MARK: Inbound: responses complete their slots

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if open[frame.streamID]?.status == nil {
                // The first block is the response's; a later one is trailers, which APNs does not send.
                open[frame.streamID]?.status = headers.headers.first(name: ":status").flatMap { Int($0) } ?? 0
                open[frame.streamID]?.retryAfter = headers.headers.first(name: "retry-after")
            }
            if headers.endStream { finish(frame.streamID, context: context) }
        case .data(let payload):
            unacknowledgedBytes += payload.data.readableBytes + (payload.paddingBytes.map { $0 + 1 } ?? 0)
            if case .byteBuffer(var bytes) = payload.data, let slot = open[frame.streamID],
               (slot.body?.readableBytes ?? 0) + bytes.readableBytes <= Self.maximumBodyBytes {
                if slot.body == nil {
                    open[frame.streamID]?.body = bytes
                } else {
                    open[frame.streamID]?.body?.writeBuffer(&bytes)
                }
            }
            if payload.endStream { finish(frame.streamID, context: context) }
        case .goAway(let lastStreamID, let errorCode, _):
            // Streams above the last one APNs processed were not delivered: they go out again
            // on a new connection. The ones below still get their answers here.
            startDraining(context: context)
            for id in open.keys where id > lastStreamID {
                complete(id, with: .unanswered("APNs is closing the connection (GOAWAY \(errorCode))"), context: context)
            }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unacknowledgedBytes >= Self.windowUpdateThreshold {
            context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream,
                                                             payload: .windowUpdate(windowSizeIncrement: unacknowledgedBytes))),
                                  promise: nil)
            unacknowledgedBytes = 0
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let negotiated) = event as? TLSUserEvent, !isReady {
            isReady = true
            if negotiated == "h2" {
                ready.succeed(())
            } else {
                // Without ALPN's "h2" the peer is no APNs: it would not understand HTTP/2.
                ready.fail(APNsConnectionRefused(reason: "the server did not agree to HTTP/2 (ALPN \(negotiated ?? "none"))"))
                context.close(promise: nil)
            }
        }
        // A stream closed without its answer: reset by APNs, or refused by the HTTP/2 layer.
        if let closed = event as? StreamClosedEvent, open[closed.streamID] != nil {
            let reason = closed.reason.map { "\($0)" } ?? "no answer"
            complete(closed.streamID, with: .unanswered("APNs closed the stream (\(reason))"), context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !isReady {
            isReady = true
            ready.fail(failure ?? ChannelError.ioOnClosedChannel)
        }
        isActive = false
        state.markClosing()
        let reason = failure.map { "APNs could not be reached: \($0)" } ?? "the connection to APNs closed"
        for id in Array(open.keys) {
            complete(id, with: .unanswered(reason), context: context)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // HTTP/2 reports stream and connection errors alike here. A stream error also closes
        // its stream (reaching `userInboundEventTriggered`); after a connection error, or a TLS
        // one, the peer or NIOSSL closes the connection (reaching `channelInactive`). Either
        // way this connection has misbehaved once: it finishes what is open, then closes.
        if failure == nil { failure = error }
        startDraining(context: context)
    }

    private func startDraining(context: ChannelHandlerContext) {
        state.markClosing()
        draining = true
        if open.isEmpty { context.close(promise: nil) }
    }

    // MARK: Slots

    private func finish(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let slot = open[id] else { return }
        guard let status = slot.status else {
            complete(id, with: .unanswered("APNs ended the stream without a response"), context: context)
            return
        }
        complete(id, with: .answered(status: status, retryAfter: slot.retryAfter, body: slot.body), context: context)
    }

    private func complete(_ id: HTTP2StreamID, with result: APNsWireResult, context: ChannelHandlerContext) {
        guard let slot = open.removeValue(forKey: id) else { return }
        let batch = slot.batch
        batch.results[slot.index] = result
        batch.remaining -= 1
        if batch.remaining == 0 {
            batch.timeout?.cancel()
            batch.promise.succeed(batch.results.map { $0 ?? .unanswered("no result") })
        }
        if draining, open.isEmpty, isActive { context.close(promise: nil) }
    }

    /// The batch's time is up: its streams still open are reset and complete unanswered.
    private func expire(_ batch: Pending, context: ChannelHandlerContext) {
        let late = open.filter { $0.value.batch === batch }.map(\.key)
        for id in late {
            complete(id, with: .unanswered("APNs did not answer in time"), context: context)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.cancel))), promise: nil)
        }
        if !late.isEmpty { context.flush() }
    }
}

/// Sits between TLS and HTTP/2 and, while a batch is being written, keeps the flushes that the
/// HTTP/2 handler passes down: the batch's frames then leave in one flush, one run of TLS
/// records and one system call.
final class APNsFlushCoalescer: ChannelOutboundHandler {
    typealias OutboundIn = Any

    private var context: ChannelHandlerContext?
    private var holding = false
    private var held = false

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func hold() {
        holding = true
    }

    /// Stops holding, and passes on the flush held meanwhile, if there was one.
    func release() {
        holding = false
        if held {
            held = false
            context?.flush()
        }
    }

    func flush(context: ChannelHandlerContext) {
        if holding {
            held = true
        } else {
            context.flush()
        }
    }
}
