import Hummingbird
import Logging
import NIOCore

/// The request context of every route.
public struct CountersignRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's address: the requesting IP shown to the device in the sealed details.
    public let remoteAddress: SocketAddress?
    /// The tenant the path names, as an OpenID issuer: set by `TenantMiddleware` on every route
    /// below a tenant's base (`/…` for the default tenant, `/t/<slug>/…` for the others).
    var issuer: Issuer?
    /// The connection the request came on, for a request the server sends to its own router on
    /// this one's behalf (`InProcessRouter`).
    let channel: any Channel

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.channel = source.channel
    }
}

extension CountersignRequestContext {
    /// The request's tenant. Only routes mounted below `TenantMiddleware` ask for it; anywhere
    /// else it is a fault of the server's routing, answered with a 500.
    func tenantIssuer() throws -> Issuer {
        guard let issuer else { throw RoutingFault.noTenant }
        return issuer
    }
}

/// A route asked for what its mount does not provide.
enum RoutingFault: Error {
    case noTenant
}
