import CountersignCore
import Foundation

/// Where an authorization request goes once it is checked, decided before any page is shown
/// (OpenID Connect Core §3.1.2.3–§3.1.2.6), and the code that resumes it once a person has
/// signed in. The pages in between are the sign-in's (`SignInFlow`): this type knows nothing of
/// them, and they know the request only through the decision.
///
/// The decision, in order:
/// 1. the request is checked (`AuthorizationEndpoint.request`): a failure is a page, or the
///    client's error at its redirect URI;
/// 2. an `id_token_hint` must be an ID token this issuer gave this client, for a user who
///    still exists (`invalid_request`, `login_required`): it names who the client expects, and
///    a session of anyone else does not answer;
/// 3. a live session of that user answers at once with a code when the request asks for no
///    approval of its own, its `max_age` and `prompt` allow the session's age, and the session's
///    authentication meets the client's and the policy's floor (`SignInRequirement`);
/// 4. with `prompt=none` nothing else may happen: `interaction_required` when a session exists
///    but the request must be approved, otherwise `login_required`;
/// 5. otherwise a sign-in is needed, starting with the hint's user or `login_hint`.
struct AuthorizationInteraction: Sendable {
    let endpoint: AuthorizationEndpoint
    /// The tenant's token keys, which check an `id_token_hint`.
    let signingKeys: TokenSigningKeys
    let origin: PublicOrigin
    let now: @Sendable () -> Date

    enum Decision: Sendable {
        /// Back to the client now: a code, or an error of the code flow.
        case redirect(AuthorizationRedirect)
        /// A person must sign in to answer `request`; `loginHint` is who the sign-in starts with.
        case signIn(AuthorizationRequest, client: Client, loginHint: String?)
    }

    /// Decides `parameters` for the tenant of `issuer`. `liveSession` is asked once the request
    /// is known to be valid (it touches the session as used); `user` finds a user of the tenant
    /// by id.
    func decide(
        _ parameters: FormParameters, issuer: Issuer,
        liveSession: () async throws -> BrowserSession?, user: (String) async throws -> User?,
        admits: (User, Client, AuthenticationContext) async throws -> Bool = { _, _, _ in true }
    ) async throws -> Decision {
        let tenant = issuer.tenant
        let (request, client): (AuthorizationRequest, Client)
        do {
            (request, client) = try await endpoint.request(parameters, tenant: tenant, issuer: issuer)
        } catch let redirect as AuthorizationRedirect {
            return .redirect(redirect)
        }
        func refusal(_ code: OAuthError.Code, _ description: String) -> Decision {
            .redirect(AuthorizationRedirect(
                redirectURI: request.redirectURI, state: request.state, issuer: issuer.identifier,
                outcome: .error(.init(code, description))))
        }
        var hinted: User?
        if let token = request.idTokenHint {
            let keys = try await signingKeys.keySet(for: tenant)
            guard let hint = try? await IDTokenHint(token, keys: keys, issuer: issuer.identifier, clientID: client.id) else {
                return refusal(.invalidRequest, "id_token_hint is not an ID token this issuer gave this client")
            }
            hinted = try await user(hint.subject)
            guard hinted != nil else { return refusal(.loginRequired, "the user the id_token_hint names is not signed in") }
        }
        let needsApproval = request.needsApproval(by: client, base: origin.base)
        if let session = try await liveSession() {
            let date = now()
            let hintAgrees = hinted.map { $0.id == session.userID } ?? true
            if hintAgrees, !needsApproval,
               request.isAnswered(bySessionAuthenticatedAt: session.authTime, now: date),
               SignInRequirement(acrValues: request.acrValues, client: client, policy: tenant.policy).accepts(session.context),
               let signedIn = try await user(session.userID), signedIn.status == .active,
               try await admits(signedIn, client, session.context) {
                return .redirect(try await resume(
                    request, issuer: issuer, userID: session.userID, authTime: session.authTime, context: session.context,
                    sessionID: session.id))
            }
            if request.prompt.contains(.none), needsApproval, hintAgrees {
                return refusal(.interactionRequired, "this request must be approved on the user's phone or with a passkey")
            }
        }
        if request.prompt.contains(.none) {
            return refusal(.loginRequired, hinted == nil ? "the user is not signed in" : "the user the id_token_hint names is not signed in")
        }
        return .signIn(request, client: client, loginHint: request.loginHint ?? hinted?.username)
    }

    /// Resumes `request` once `userID` has signed in (or a live session answered it): a new
    /// code, bound to the session, and the redirect that delivers it.
    func resume(_ request: AuthorizationRequest, issuer: Issuer, userID: String, authTime: Date,
                context: AuthenticationContext, sessionID: String?) async throws -> AuthorizationRedirect {
        try await endpoint.issueCode(
            for: request, tenant: issuer.tenant, issuer: issuer, userID: userID, authTime: authTime, context: context,
            sessionID: sessionID)
    }
}
