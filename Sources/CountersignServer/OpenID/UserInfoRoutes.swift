import Foundation
import Hummingbird

/// The UserInfo endpoint's routes, for the default tenant at the root and every tenant below
/// `/t/<slug>`. Answers are never cached; errors are bearer-token errors (`BearerTokenError`).
struct UserInfoRoutes: Sendable {
    let metrics: ServerMetrics
    let accessTokens: AccessTokenVerifier

    func register(on routes: RouterGroup<CountersignRequestContext>) {
        routes.get("/userinfo") { request, context in try await answer(request, context) }
        routes.post("/userinfo") { request, context in try await answer(request, context) }
    }

    private func answer(_ request: Request, _ context: CountersignRequestContext) async throws -> Response {
        let issuer = try context.tenantIssuer()
        do {
            let presented = try await BearerToken.read(request)
            let (token, user): (VerifiedAccessToken, User)
            do {
                (token, user) = try await accessTokens.validate(presented, issuer: issuer)
            } catch let rejection as AccessTokenRejection {
                throw BearerTokenError.invalidToken(rejection.description)
            }
            guard token.scope.contains(Scope.openID) else { throw BearerTokenError.insufficientScope(Scope.openID) }
            metrics.oauthOutcome(endpoint: "userinfo", outcome: "ok")
            return try OAuthResponse.json(UserInfo(of: user, scope: token.scope))
        } catch let error as BearerTokenError {
            metrics.oauthOutcome(endpoint: "userinfo", outcome: error.code?.rawValue ?? "missing_token")
            throw error
        }
    }
}
