import Foundation
import Hummingbird

/// The endpoints every OAuth grant shares, for the default tenant at the root and for every
/// tenant below `/t/<slug>`:
///
/// - `POST /token`: every grant (`TokenEndpoint`: CIBA's, the authorization code's, refresh);
/// - `POST /par`: RFC 9126 pushed authorization requests (`AuthorizationEndpoint`);
/// - `POST /revoke` and `POST /introspect`: RFC 7009 and RFC 7662 (`TokenRevocation`,
///   `TokenIntrospection`).
///
/// Each takes a form body and an authenticated client (public clients where the RFC allows),
/// answers JSON that no cache stores, and fails with OAuth error bodies (`OAuthEndpoint`).
struct OAuthRoutes: Sendable {
    let endpoint: OAuthEndpoint
    let tokens: TokenEndpoint
    let authorization: AuthorizationEndpoint
    let revocation: TokenRevocation
    let introspection: TokenIntrospection

    func register(on routes: TenantRoutes) {
        let oauth = routes.group(surface: .oauth, takesSecret: true)
        oauth.post("/token") { request, context in
            try await endpoint.handle("token", request, context, admittingPublic: true) { form, client, issuer in
                try OAuthResponse.json(try await tokens.exchange(form, client: client, issuer: issuer))
            }
        }
        oauth.post("/par") { request, context in
            try await endpoint.handle("par", request, context, admittingPublic: true) { form, client, _ in
                try OAuthResponse.json(try await authorization.push(form, client: client), status: .created)
            }
        }
        oauth.post("/revoke") { request, context in
            try await endpoint.handle("revoke", request, context, admittingPublic: true, admittingNUL: ["token"]) {
                form, client, issuer in
                try OAuthResponse.json(try await revocation.revoke(form, client: client, issuer: issuer))
            }
        }
        oauth.post("/introspect") { request, context in
            try await endpoint.handle("introspect", request, context, admittingNUL: ["token"]) { form, client, issuer in
                try OAuthResponse.json(try await introspection.introspect(form, client: client, issuer: issuer))
            }
        }
    }
}
