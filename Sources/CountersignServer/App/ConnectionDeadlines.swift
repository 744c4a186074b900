import Logging
import NIOCore
import NIOHTTP1

/// The deadline a connection is under, by what it is doing: idle (no request on it), sending
/// a request head, sending a request body, or waiting for the server's answer (no deadline:
/// the server's own time is not the client's fault).
///
/// Two handlers feed it, both on the connection's event loop: `RawBytesWatch`, first in the
/// pipeline, sees bytes arrive and the server ask for more; `HTTPPartWatch`, after the HTTP
/// decoder, sees where one request ends and its response ends. The HTTP parts alone cannot
/// tell a silent client from one dribbling its head a byte at a time.
final class ConnectionDeadlines {
    enum Phase: Equatable {
        case idle
        case head
        case body
        case answering
    }

    private(set) var phase: Phase = .idle
    private let limits: ConnectionLimits
    private let registry: ConnectionRegistry
    private let logger: Logger
    private var context: ChannelHandlerContext?
    private var isOpen = false
    private var timer: Scheduled<Void>?
    /// When the current deadline started: the phase's start, or for a body its last bytes.
    private var since = NIODeadline.now()
    /// Requests whose head arrived and whose response has not ended.
    private var requestsInFlight = 0
    /// Whether the server has asked the socket for bytes that have not come yet. A body that
    /// stalls because the server stopped reading (back-pressure) is not a slow client.
    private var readOutstanding = false

    init(limits: ConnectionLimits, registry: ConnectionRegistry, logger: Logger) {
        self.limits = limits
        self.registry = registry
        self.logger = logger
    }

    // MARK: Events

    func opened(_ context: ChannelHandlerContext) {
        guard !isOpen else { return }
        isOpen = true
        self.context = context
        let channel = context.channel
        guard registry.admit(channel) else {
            context.close(promise: nil)
            return
        }
        let registry = registry
        channel.closeFuture.whenComplete { _ in registry.remove(channel) }
        enter(.idle)
    }

    func closed() {
        timer?.cancel()
        timer = nil
        context = nil
    }

    func bytesArrived() {
        readOutstanding = false
        switch phase {
        case .idle: enter(.head)
        case .body: since = .now()
        case .head, .answering: break
        }
    }

    func serverAskedForBytes() {
        readOutstanding = true
    }

    func requestHeadArrived() {
        requestsInFlight += 1
        enter(.body)
    }

    func requestEnded() {
        enter(requestsInFlight > 0 ? .answering : .idle)
    }

    func responseEnded() {
        requestsInFlight = max(0, requestsInFlight - 1)
        if phase == .answering, requestsInFlight == 0 { enter(.idle) }
    }

    // MARK: Timing

    private func enter(_ next: Phase) {
        let wasEvictable = Self.evictable(phase)
        phase = next
        since = .now()
        if let context, wasEvictable != Self.evictable(next) {
            registry.setEvictable(context.channel, Self.evictable(next))
        }
        timer?.cancel()
        timer = nil
        if let limit = timeout(of: next) { schedule(at: since + limit) }
    }

    /// A connection may be closed to make room unless a request on it is being answered.
    private static func evictable(_ phase: Phase) -> Bool {
        phase == .idle || phase == .head
    }

    private func timeout(of phase: Phase) -> TimeAmount? {
        switch phase {
        case .idle: TimeAmount(limits.idleTimeout)
        case .head: TimeAmount(limits.headerTimeout)
        case .body: TimeAmount(limits.bodyProgressTimeout)
        case .answering: nil
        }
    }

    private func schedule(at deadline: NIODeadline) {
        guard let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            expired()
        }
    }

    private func expired() {
        guard let context, let limit = timeout(of: phase) else { return }
        if phase == .body {
            // Bytes that came since the timer was set moved the deadline on; a server that is
            // not reading leaves the client nothing to be late with.
            if since + limit > .now() || !readOutstanding {
                if !readOutstanding { since = .now() }
                schedule(at: since + limit)
                return
            }
        }
        logger.debug("closing a slow connection", metadata: [
            "phase": "\(phase)", "timeout": "\(limit)", "peer": "\(context.channel.remoteAddress?.description ?? "-")",
        ])
        context.close(promise: nil)
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// The first handler of a connection: reports bytes arriving, and the server asking for more,
/// to the connection's `ConnectionDeadlines`.
final class RawBytesWatch: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private let deadlines: ConnectionDeadlines

    init(_ deadlines: ConnectionDeadlines) {
        self.deadlines = deadlines
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { deadlines.opened(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        deadlines.opened(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadlines.closed()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadlines.closed()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        deadlines.bytesArrived()
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        deadlines.serverAskedForBytes()
        context.read()
    }
}

/// Sits after the HTTP decoder: reports where requests and responses begin and end to the
/// connection's `ConnectionDeadlines`.
final class HTTPPartWatch: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let deadlines: ConnectionDeadlines

    init(_ deadlines: ConnectionDeadlines) {
        self.deadlines = deadlines
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: deadlines.requestHeadArrived()
        case .body: break
        case .end: deadlines.requestEnded()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { deadlines.responseEnded() }
        context.write(data, promise: promise)
    }
}

@available(*, unavailable)
extension ConnectionDeadlines: Sendable {}

@available(*, unavailable)
extension RawBytesWatch: Sendable {}

@available(*, unavailable)
extension HTTPPartWatch: Sendable {}
