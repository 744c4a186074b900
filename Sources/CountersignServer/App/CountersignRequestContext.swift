import Hummingbird
import Logging
import NIOCore

/// The request context of every route.
public struct CountersignRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's address: the requesting IP shown to the device in the sealed details.
    public let remoteAddress: SocketAddress?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }
}
