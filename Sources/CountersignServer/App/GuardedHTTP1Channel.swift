import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1.1 connection, under `ConnectionLimits`: each connection is admitted
/// by the `ConnectionRegistry` and closed when it overstays its phase's deadline
/// (`ConnectionDeadlines`).
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http: HTTP1Channel
    let limits: ConnectionLimits
    let registry: ConnectionRegistry

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        http.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let deadlines = ConnectionDeadlines(limits: limits, registry: registry, logger: logger)
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(HTTPPartWatch(deadlines), position: .after(decoder))
            try pipeline.addHandler(MalformedHTTPAnswer(), position: .after(decoder))
            try pipeline.addHandler(RawBytesWatch(deadlines), position: .first)
            try pipeline.addHandler(InputClosedWatch(eventLoop: channel.eventLoop), position: .first)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await http.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 under `limits`, at most `registry.maximum` connections at once.
    static func guardedHTTP1(limits: ConnectionLimits, registry: ConnectionRegistry) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            GuardedHTTP1Channel(http: HTTP1Channel(responder: responder), limits: limits, registry: registry)
        }
    }
}
