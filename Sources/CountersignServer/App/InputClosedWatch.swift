import NIOCore

/// Tells a long-lived response that its client has gone. Hummingbird allows remote half-closure,
/// so a client's FIN leaves the channel open, and a response that writes only now and then (a
/// device's live stream, every 15 seconds) would notice the client gone only when a write fails:
/// its second keepalive, since the first still leaves. `clientGone` succeeds when the client
/// closes its side, or when the channel closes or the handler leaves the pipeline.
final class InputClosedWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let clientGone: EventLoopPromise<Void>
    private var done = false

    init(eventLoop: any EventLoop) {
        clientGone = eventLoop.makePromise()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { finish() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish()
    }

    private func finish() {
        guard !done else { return }
        done = true
        clientGone.succeed()
    }

    /// When the client of `channel` goes; nil for a channel without the watch (the in-memory
    /// test transport).
    static func clientGone(on channel: any Channel) async -> EventLoopFuture<Void>? {
        try? await channel.pipeline.handler(type: InputClosedWatch.self).map(\.clientGone.futureResult).get()
    }
}

@available(*, unavailable)
extension InputClosedWatch: Sendable {}
