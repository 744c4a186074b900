import CountersignCore
import Foundation
import Hummingbird

/// The relying party's endpoints of OpenID Connect CIBA (poll, ping and push modes), for the default tenant at
/// the root and for every tenant below `/t/<slug>`:
///
/// - `POST /bc-authorize`: start a request (`BackchannelAuthentication`);
/// - `POST /token`: poll and exchange it (`CIBAGrant`), or refresh (`RefreshTokenGrant`);
/// - `POST /bc-authorize/receipt`: the device-signed evidence of a decision (`ApprovalReceipt`);
/// - `POST /revoke` and `POST /introspect`: RFC 7009 and RFC 7662 (`TokenRevocation`,
///   `TokenIntrospection`).
///
/// All of these take a form body and an authenticated client (`ClientAuthentication`), answer
/// JSON that no cache stores, and fail with OAuth error bodies (`OAuthError`). `/userinfo`,
/// which takes the user's access token instead, is `UserInfoRoutes`.
struct CIBARoutes: Sendable {
    let features: Features
    let metrics: ServerMetrics
    let now: @Sendable () -> Date

    func register(on routes: TenantRoutes) {
        let oauth = routes.group(surface: .oauth, takesSecret: true)
        oauth.post("/bc-authorize") { request, context in
            try await self.oauth("bc-authorize", request, context, admittingNUL: ["binding_message"]) { form, client, issuer in
                let origin = Self.remoteAddress(of: context)
                return try OAuthResponse.json(try await features.backchannel.start(
                    form, client: client, issuer: issuer,
                    requestedFrom: BackchannelAuthentication.requestContext(
                        ipAddress: origin, userAgent: request.headers[.userAgent])))
            }
        }
        oauth.post("/token") { request, context in
            try await self.oauth("token", request, context, admittingPublic: true) { form, client, issuer in
                try OAuthResponse.json(try await features.tokenEndpoint.exchange(form, client: client, issuer: issuer))
            }
        }
        oauth.post("/par") { request, context in
            try await self.oauth("par", request, context, admittingPublic: true) { form, client, _ in
                try OAuthResponse.json(try await features.authorization.push(form, client: client), status: .created)
            }
        }
        oauth.post("/revoke") { request, context in
            try await self.oauth("revoke", request, context, admittingPublic: true, admittingNUL: ["token"]) { form, client, issuer in
                try OAuthResponse.json(try await features.revocation.revoke(form, client: client, issuer: issuer))
            }
        }
        oauth.post("/introspect") { request, context in
            try await self.oauth("introspect", request, context, admittingNUL: ["token"]) { form, client, issuer in
                try OAuthResponse.json(try await features.introspection.introspect(form, client: client, issuer: issuer))
            }
        }
        oauth.post("/totp/verify") { request, context in
            try await self.oauth("totp", request, context) { form, client, issuer in
                try OAuthResponse.json(try await features.totp.verify(form, client: client, issuer: issuer))
            }
        }
        oauth.post("/bc-authorize/receipt") { request, context in
            try await self.oauth("receipt", request, context) { form, client, issuer in
                try OAuthResponse.json(try await ApprovalReceipt.of(
                    form, client: client, issuer: issuer, requests: features.tokenEndpoint.ciba.store,
                    certificates: features.deviceCertificates, at: now()))
            }
        }
        UserInfoRoutes(metrics: metrics, accessTokens: features.accessTokens).register(on: routes.group(surface: .oauth))
    }

    /// Reads the form (`admittingNUL`: see `FormParameters.read`), authenticates the client (a
    /// public one only where `admittingPublic`) and runs `body`, counting outcomes per endpoint.
    private func oauth(
        _ endpoint: String, _ request: Request, _ context: CountersignRequestContext, admittingPublic: Bool = false,
        admittingNUL: Set<String> = [], _ body: (FormParameters, Client, Issuer) async throws -> Response
    ) async throws -> Response {
        let issuer = try context.tenantIssuer()
        do {
            let form = try await FormParameters.read(request, admittingNUL: admittingNUL)
            let client = try await features.clientAuthentication.authenticate(
                authorization: request.headers[.authorization], form: form, tenant: issuer.tenant,
                admittingPublic: admittingPublic)
            let response = try await body(form, client, issuer)
            metrics.oauthOutcome(endpoint: endpoint, outcome: "ok")
            return response
        } catch let failure as any WireFailure {
            metrics.oauthOutcome(endpoint: endpoint, outcome: failure.wireError.code ?? "missing_token")
            throw failure
        }
    }

    /// The connection's peer address.
    private static func remoteAddress(of context: CountersignRequestContext) -> String? {
        context.remoteAddress?.ipAddress
    }
}
