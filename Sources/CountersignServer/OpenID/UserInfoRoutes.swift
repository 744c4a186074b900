import Foundation
import Hummingbird

/// The UserInfo endpoint's routes, for the default tenant at the root and every tenant below
/// `/t/<slug>`. Answers are never cached; errors are bearer-token errors (`BearerTokenError`).
struct UserInfoRoutes: Sendable {
    let services: ServerServices
    let accessTokens: AccessTokenVerifier

    func register(on router: Router<CountersignRequestContext>, prefix: String) {
        router.get("\(prefix)/userinfo") { request, context in try await answer(request, context) }
        router.post("\(prefix)/userinfo") { request, context in try await answer(request, context) }
    }

    private func answer(_ request: Request, _ context: CountersignRequestContext) async throws -> Response {
        let issuer = try await Issuer.of(context, services: services)
        do {
            let presented = try await BearerToken.read(request)
            let (token, user): (VerifiedAccessToken, User)
            do {
                (token, user) = try await accessTokens.validate(presented, issuer: issuer)
            } catch let rejection as AccessTokenRejection {
                throw BearerTokenError.invalidToken(rejection.description)
            }
            guard token.scope.contains(Scope.openID) else { throw BearerTokenError.insufficientScope(Scope.openID) }
            services.metrics.oauthOutcome(endpoint: "userinfo", outcome: "ok")
            return try OAuthResponse.json(UserInfo(of: user, scope: token.scope))
        } catch var error as BearerTokenError {
            error.realm = issuer.identifier
            services.metrics.oauthOutcome(endpoint: "userinfo", outcome: error.code?.rawValue ?? "missing_token")
            throw error
        }
    }
}
