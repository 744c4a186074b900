import Foundation
import Hummingbird

/// What every client-authenticated endpoint of the OAuth family does around its own step (the
/// token endpoint, `/par`, `/revoke`, `/introspect`, CIBA's `bc-authorize` and receipt, the TOTP
/// check): read the form body, authenticate the client (`ClientAuthentication`), run the step,
/// and count the outcome per endpoint. Failures leave as OAuth error bodies (`OAuthError`)
/// through the `.oauth` surface's error middleware.
struct OAuthEndpoint: Sendable {
    let clientAuthentication: ClientAuthentication
    let metrics: ServerMetrics

    /// Reads the form (`admittingNUL`: see `FormParameters.read`), authenticates the client (a
    /// public one only where `admittingPublic`) and runs `body`, counting outcomes as `endpoint`.
    func handle(
        _ endpoint: String, _ request: Request, _ context: CountersignRequestContext, admittingPublic: Bool = false,
        admittingNUL: Set<String> = [], _ body: (FormParameters, Client, Issuer) async throws -> Response
    ) async throws -> Response {
        let issuer = try context.tenantIssuer()
        do {
            let form = try await FormParameters.read(request, admittingNUL: admittingNUL)
            let client = try await clientAuthentication.authenticate(
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
}
