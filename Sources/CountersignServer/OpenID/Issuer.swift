import Foundation

/// A tenant as an OpenID Provider: its issuer identifier and the endpoints below it. The
/// default tenant's issuer is the public URL itself, every other tenant's `<url>/t/<slug>`.
struct Issuer: Sendable {
    let tenant: Tenant
    /// The `iss` of every token the tenant issues.
    let identifier: String

    init(tenant: Tenant, origin: PublicOrigin) {
        self.tenant = tenant
        self.identifier = origin.tenantBase(tenant)
    }

    /// The tenant's base path below the server's origin: `""` for the default tenant,
    /// `/t/<slug>` for the others. The hosted pages link and post below it.
    var basePath: String { tenant.isDefault ? "" : "/t/\(tenant.slug)" }

    var jwksURI: String { identifier + "/jwks" }
    var tokenEndpoint: String { identifier + "/token" }
    var backchannelAuthenticationEndpoint: String { identifier + "/bc-authorize" }
    var receiptEndpoint: String { identifier + "/bc-authorize/receipt" }
    var revocationEndpoint: String { identifier + "/revoke" }
    var introspectionEndpoint: String { identifier + "/introspect" }
    var userInfoEndpoint: String { identifier + "/userinfo" }
    var authorizationEndpoint: String { identifier + "/authorize" }
    var pushedAuthorizationRequestEndpoint: String { identifier + "/par" }
    var endSessionEndpoint: String { identifier + "/logout" }
}
