import Foundation
import Hummingbird
import Logging

/// The routes below a tenant's base, written once and mounted twice: at the root for the
/// default tenant and at `/t/{tenant}` for every tenant. Each group names the format its
/// failures are written in and whether it takes a secret (so failed authentications count);
/// then `TenantMiddleware` puts the tenant in the request context before the route runs.
struct TenantRoutes {
    typealias Context = CountersignRequestContext

    private let collection = RouteCollection(context: Context.self)
    private let rootCollection = RouteCollection(context: Context.self)
    private let tenant: TenantMiddleware
    private let throttle: FailedAuthenticationMiddleware
    private let logger: Logger

    init(tenant: TenantMiddleware, throttle: FailedAuthenticationMiddleware, logger: Logger) {
        self.tenant = tenant
        self.throttle = throttle
        self.logger = logger
    }

    /// A group of routes below the tenant's base, at `path`.
    func group(_ path: RouterPath = "", surface: ErrorSurface, takesSecret: Bool = false) -> RouterGroup<Context> {
        let group = collection.group(path).add(middleware: ErrorMiddleware(surface: surface, logger: logger))
        if takesSecret { group.add(middleware: throttle) }
        return group.add(middleware: tenant)
    }

    /// A group of routes mounted once, at the root, whose paths name the tenant themselves
    /// (`…/t/{tenant}`) or name none (the default tenant): well-known documents whose suffix is
    /// the issuer's path (`/.well-known/ssf-configuration/t/<slug>`).
    func rootGroup(surface: ErrorSurface) -> RouterGroup<Context> {
        rootCollection.group("").add(middleware: ErrorMiddleware(surface: surface, logger: logger)).add(middleware: tenant)
    }

    /// Mounts every route at the root (the default tenant) and below `/t/{tenant}`.
    func mount(on router: Router<Context>) {
        router.addRoutes(collection)
        router.addRoutes(collection, atPath: "/t/{tenant}")
        router.addRoutes(rootCollection)
    }
}
