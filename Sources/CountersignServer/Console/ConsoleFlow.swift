import Crypto
import Foundation
import Hummingbird

/// The console's sign-in and what every console page shares. The console is a relying party of
/// its own tenant: a public client (`console-<tenant id>`, made on first use) that signs the
/// administrator in with the authorization code flow and PKCE, on the hosted sign-in pages like
/// any application, then redeems the code at the token endpoint and asks UserInfo who signed
/// in. A user with a console role (`ConsoleRole`) gets a session; every action of the session
/// is an administration API call (`InProcessRouter`) with the session's admin key, which holds
/// the role's rights and nothing else.
struct ConsoleFlow: Sendable {
    let store: any ConsoleStore
    let clients: any ClientRepository
    let database: any Database
    let router: InProcessRouter
    let cookies: ConsoleCookies
    let now: @Sendable () -> Date

    struct Visit: Sendable {
        let issuer: Issuer
        let request: Request
        let context: CountersignRequestContext

        var tenant: Tenant { issuer.tenant }
        /// The tenant's base path, where its routes are mounted: `""` or `/t/<slug>`.
        var base: String { issuer.basePath }
        var redirectURI: String { issuer.identifier + "/console/callback" }
    }

    static func clientID(for tenant: Tenant) -> String { "console-\(tenant.id)" }

    // MARK: - Sign-in

    /// Sends the browser to the tenant's authorization endpoint, remembering `state` and the
    /// PKCE verifier in a sealed cookie.
    func signIn(_ visit: Visit) async throws -> PageAnswer {
        try await ensureClient(visit)
        let signIn = ConsoleSignIn(
            state: Secrets.randomBytes(24).base64URLEncodedString, verifier: Secrets.randomBytes(32).base64URLEncodedString,
            expiresAt: now().addingTimeInterval(ConsoleSignIn.lifetime))
        let challenge = Data(SHA256.hash(data: Data(signIn.verifier.utf8))).base64URLEncodedString
        let query = [
            ("response_type", "code"), ("client_id", Self.clientID(for: visit.tenant)), ("redirect_uri", visit.redirectURI),
            ("scope", "openid profile"), ("state", signIn.state), ("code_challenge", challenge), ("code_challenge_method", "S256"),
            ("nonce", Secrets.randomBytes(16).base64URLEncodedString),
        ].map { "\($0.0)=\(AuthorizationRedirect.encoded($0.1))" }.joined(separator: "&")
        let cookie = cookies.cookie(
            cookies.signInName(for: visit.tenant), try cookies.seal(signIn, purpose: "sign-in"),
            maxAge: Int(ConsoleSignIn.lifetime))
        return .redirect(to: "\(visit.base)/authorize?\(query)", cookies: [cookie])
    }

    /// The console client of the tenant, registered as the console needs it: public, PKCE,
    /// its one redirect URI. Put back as it should be if an administrator changed it.
    private func ensureClient(_ visit: Visit) async throws {
        let id = Self.clientID(for: visit.tenant)
        let date = now()
        var wanted = Client(
            id: id, tenantID: visit.tenant.id, name: "Countersign console", scopes: ["openid", "profile"], deliveryMode: .poll,
            notificationEndpoint: nil, createdAt: date, updatedAt: date)
        wanted.authenticationMethod = .none
        wanted.redirectURIs = [visit.redirectURI]
        let client = wanted
        try await database.transaction { executor in
            if let existing = try await clients.find(id: id, tenantID: visit.tenant.id, on: executor) {
                guard existing.redirectURIs != client.redirectURIs || existing.authenticationMethod != .none
                        || existing.scopes != client.scopes else { return }
                var repaired = client
                repaired.createdAt = existing.createdAt
                try await clients.update(repaired, on: executor)
            } else {
                try await clients.insert(client, secretHash: Secrets.hash(Secrets.generate(prefix: "none_")), on: executor)
            }
        }
    }

    /// The redirect back from the authorization endpoint: checks `state`, redeems the code with
    /// the verifier, asks UserInfo who signed in, and opens a session for a user with a role.
    func callback(_ parameters: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        let clearing = cookies.cookie(cookies.signInName(for: visit.tenant), "", maxAge: 0)
        guard let pending = cookies.open(
                ConsoleSignIn.self, visit.request.cookies[cookies.signInName(for: visit.tenant)]?.value, purpose: "sign-in"),
              pending.expiresAt > now(),
              let state = parameters["state"],
              Secrets.constantTimeEqual(Data(state.utf8), Data(pending.state.utf8)) else {
            throw ConsoleRefusal(status: .badRequest, heading: "This sign-in cannot continue",
                                 message: "The sign-in took too long or did not start here. Open the console again.",
                                 cookies: [clearing])
        }
        if let error = parameters["error"] {
            throw ConsoleRefusal(status: .forbidden, heading: "Sign-in refused",
                                 message: parameters["error_description"] ?? "The sign-in ended with \(error).", cookies: [clearing])
        }
        guard let code = parameters["code"] else {
            throw ConsoleRefusal(status: .badRequest, heading: "This sign-in cannot continue",
                                 message: "The sign-in came back without a code.", cookies: [clearing])
        }
        let token = try await router.send(
            .post, visit.base + "/token",
            headers: [.contentType: "application/x-www-form-urlencoded"],
            body: Data([
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", visit.redirectURI),
                ("client_id", Self.clientID(for: visit.tenant)), ("code_verifier", pending.verifier),
            ].map { "\($0.0)=\(AuthorizationRedirect.encoded($0.1))" }.joined(separator: "&").utf8),
            as: visit.context)
        guard token.status == .ok,
              let tokens = try? JSONSerialization.jsonObject(with: token.body) as? [String: Any],
              let accessToken = tokens["access_token"] as? String else {
            throw ConsoleRefusal(status: .badRequest, heading: "This sign-in cannot continue",
                                 message: "The code could not be redeemed: \(token.errorDescription ?? "\(token.status.code)").",
                                 cookies: [clearing])
        }
        let info = try await router.send(
            .get, visit.base + "/userinfo", headers: [.authorization: "Bearer \(accessToken)"], as: visit.context)
        guard info.status == .ok, let claims = try? JSONSerialization.jsonObject(with: info.body) as? [String: Any],
              let userID = claims["sub"] as? String else {
            throw ConsoleRefusal(status: .badRequest, heading: "This sign-in cannot continue",
                                 message: "Who signed in could not be read.", cookies: [clearing])
        }
        let username = (claims["preferred_username"] as? String) ?? userID
        guard let grant = try await store.role(userID: userID), grant.tenantID == visit.tenant.id else {
            throw ConsoleRefusal(status: .forbidden, heading: "No access to the console",
                                 message: "\(username) has no console role in \(visit.tenant.displayName). An administrator can grant one.",
                                 cookies: [clearing])
        }
        let date = now()
        try await store.revokeSessionKeys(issuedBefore: date.addingTimeInterval(-ConsoleSession.lifetime), at: date)
        let (key, secret) = try await store.issueSessionKey(for: grant, username: username, at: date)
        let session = ConsoleSession(
            userID: userID, username: username, tenantID: visit.tenant.id, role: grant.role, keyID: key.id, keySecret: secret,
            csrf: Secrets.randomBytes(24).base64URLEncodedString, expiresAt: date.addingTimeInterval(ConsoleSession.lifetime))
        let sessionCookie = cookies.cookie(
            cookies.sessionName(for: visit.tenant), try cookies.seal(session, purpose: "session"),
            maxAge: Int(ConsoleSession.lifetime))
        return .redirect(to: visit.base + "/console", cookies: [clearing, sessionCookie])
    }

    /// The visit's session, if it has a live one in this tenant.
    func session(_ visit: Visit) -> ConsoleSession? {
        guard let session = cookies.open(
                ConsoleSession.self, visit.request.cookies[cookies.sessionName(for: visit.tenant)]?.value, purpose: "session"),
              session.tenantID == visit.tenant.id, session.expiresAt > now() else { return nil }
        return session
    }

    /// Ends the session: its key is revoked, so the cookie is worth nothing anywhere. The form
    /// must carry the session's CSRF token: without it nothing is ended and the console says
    /// so, rather than forgetting the cookie in this browser while the session goes on.
    func signOut(_ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        if let session = session(visit) {
            guard checkCSRF(form, session) else {
                throw ConsoleRefusal(status: .forbidden, heading: "This sign-out cannot be accepted",
                                     message: "The form did not come from this console session; you are still signed in.")
            }
            try await store.revokeSessionKey(id: session.keyID, at: now())
        }
        return .page(
            "console-signed-out", ConsoleSignedOutPage(tenantName: visit.tenant.displayName, base: visit.base),
            cookies: [cookies.cookie(cookies.sessionName(for: visit.tenant), "", maxAge: 0)])
    }

    /// Whether a form carries its session's CSRF token (compared in constant time).
    func checkCSRF(_ form: FormParameters, _ session: ConsoleSession) -> Bool {
        guard let sent = form["csrf"] else { return false }
        return Secrets.constantTimeEqual(Data(sent.utf8), Data(session.csrf.utf8))
    }

    // MARK: - Administration calls

    /// An administration API call with the session's key; a 401 throws `SessionRevoked`.
    func admin(_ method: HTTPRequest.Method, _ path: String, json: [String: any Sendable]? = nil,
               session: ConsoleSession, _ visit: Visit) async throws -> InProcessRouter.Answer {
        try await admin(method, path, body: try json.map { try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) },
                        session: session, visit)
    }

    /// An administration call with `body` as its JSON body, if given.
    func admin(_ method: HTTPRequest.Method, _ path: String, body json: Data?,
               session: ConsoleSession, _ visit: Visit) async throws -> InProcessRouter.Answer {
        var headers: HTTPFields = [.authorization: "Bearer \(session.keySecret)"]
        if json != nil { headers[.contentType] = "application/json" }
        let body = json ?? Data()
        let answer = try await router.send(method, path, headers: headers, body: body, as: visit.context)
        if answer.status == .unauthorized { throw SessionRevoked() }
        return answer
    }

    /// The session's key no longer authenticates (signed out elsewhere, or revoked).
    struct SessionRevoked: Error {}

    /// The tenant's path in the administration API.
    func tenantPath(_ visit: Visit) -> String {
        "/admin/v1/tenants/\(AuthorizationRedirect.encoded(visit.tenant.slug))"
    }

}

/// A console page that cannot be shown or a form it refused: the console's message page, with
/// its status, heading and message (`ErrorSurface.console`); nothing was changed.
struct ConsoleRefusal: WireFailure, Sendable {
    let status: HTTPResponse.Status
    let heading: String
    let message: String
    /// Cookies the answer sets: an ended session's, forgotten.
    var cookies: [Cookie] = []

    var wireError: WireError {
        WireError(status, code: nil, description: message, headers: PageAnswer.setCookie(cookies), heading: heading)
    }
}
