import Foundation
import Hummingbird

/// Finds the tenant a path names, once for every route below a tenant's base: the default
/// tenant at the root, any other below `/t/{tenant}`. The tenant's routes are one collection
/// (`TenantRoutes`) mounted at both places, so a route never looks at the path itself.
struct TenantMiddleware: RouterMiddleware {
    typealias Context = CountersignRequestContext

    let tenants: TenantService
    let origin: PublicOrigin

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let slug = context.parameters.get("tenant")
        guard let tenant = try await tenants.resolve(slug: slug) else {
            throw APIError.notFound("tenant \(slug ?? "default") does not exist")
        }
        let issuer = Issuer(tenant: tenant, origin: origin)
        var context = context
        context.issuer = issuer
        do {
            return try await next(request, context)
        } catch let failure as any WireFailure {
            // A challenge names the tenant's issuer as its realm; an error page, the tenant.
            var error = failure.wireError
            error.realm = error.realm ?? issuer.identifier
            error.tenant = error.tenant ?? PageTenant(name: tenant.displayName, base: issuer.basePath)
            throw error
        }
    }
}
