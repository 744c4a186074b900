import Foundation
import Hummingbird

/// `GET /` (and `/t/<slug>/`): a browser that opens the server's address gets a page naming the
/// tenant, with the way to sign in to one's account and to the console; a client that does not
/// ask for HTML (an API client, `curl`) gets the JSON 404 any path without a route gets, as
/// before.
struct LandingPage: PageModel {
    let title = "Sign in"
    let tenantName: String
    let script: String? = nil
    /// The tenant's base path, where the account and console are.
    let base: String
    /// The tenant's OpenID issuer, for whoever integrates an application.
    let issuer: String

    /// Whether the request asks for a page: its `Accept` names `text/html`, as a browser's does.
    static func isForBrowser(_ request: Request) -> Bool {
        request.headers[values: .accept].contains { $0.lowercased().contains("text/html") }
    }

    static func register(on routes: TenantRoutes) {
        routes.group(surface: .api).get("") { request, context in
            guard isForBrowser(request) else { throw HTTPError(.notFound) }
            let issuer = try context.tenantIssuer()
            return PageAnswer.page("landing", LandingPage(
                tenantName: issuer.tenant.displayName, base: issuer.tenant.isDefault ? "" : "/t/\(issuer.tenant.slug)",
                issuer: issuer.identifier))
        }
    }
}
