import CountersignCore
import Foundation
import Hummingbird

/// The relying party's endpoints of OpenID Connect CIBA (poll, ping and push modes) beside the
/// shared token endpoint (`OAuthRoutes`), for the default tenant at the root and for every tenant
/// below `/t/<slug>`:
///
/// - `POST /bc-authorize`: start a request (`BackchannelAuthentication`);
/// - `POST /bc-authorize/receipt`: the device-signed evidence of a decision (`ApprovalReceipt`).
///
/// Both take a form body and an authenticated client, and fail with OAuth error bodies
/// (`OAuthEndpoint`). The request is polled and exchanged at `/token` (`CIBAGrant`).
struct CIBARoutes: Sendable {
    let endpoint: OAuthEndpoint
    let backchannel: BackchannelAuthentication
    /// The requests whose receipts are asked for.
    let requests: any CIBAGrantStore
    let certificates: DeviceCertificates
    let now: @Sendable () -> Date

    func register(on routes: TenantRoutes) {
        let oauth = routes.group(surface: .oauth, takesSecret: true)
        oauth.post("/bc-authorize") { request, context in
            try await endpoint.handle("bc-authorize", request, context, admittingNUL: ["binding_message"]) {
                form, client, issuer in
                try OAuthResponse.json(try await backchannel.start(
                    form, client: client, issuer: issuer,
                    requestedFrom: TransactionDetails.Context.requestedFrom(
                        ipAddress: context.remoteAddress?.ipAddress, userAgent: request.headers[.userAgent])))
            }
        }
        oauth.post("/bc-authorize/receipt") { request, context in
            try await endpoint.handle("receipt", request, context) { form, client, issuer in
                try OAuthResponse.json(try await ApprovalReceipt.of(
                    form, client: client, issuer: issuer, requests: requests, certificates: certificates, at: now()))
            }
        }
    }
}
