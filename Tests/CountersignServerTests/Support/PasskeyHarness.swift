import CountersignCore
import CountersignWebAuthn
import Crypto
import Foundation
import HummingbirdTesting
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One passkey on a `WebAuthnTestAuthenticator`, used at the server's public URL as its origin
/// and scoped, as a browser scopes it, to the RP ID the options name (else the server's own).
/// `flags` and `signCount` are what it reports in its next response.
struct TestPasskey: Sendable {
    var authenticator = WebAuthnTestAuthenticator()
    let origin: String
    let rpID: String
    var flags: AuthenticatorFlags
    var signCount: UInt32 = 0

    /// `backupEligible`: a synced passkey (BE and BS set), as password managers make.
    init(for server: TestServer, backupEligible: Bool = false, signCount: UInt32 = 0) {
        origin = server.base
        rpID = PasskeyBench.relyingPartyID(of: server)
        flags = backupEligible ? [.userPresent, .userVerified, .backupEligible, .backupState] : [.userPresent, .userVerified]
        self.signCount = signCount
    }

    var credentialID: String { Base64URLBytes(authenticator.credentialID).base64URL }

    /// `navigator.credentials.create()` for `options`; `change` breaks one part of it.
    mutating func create(
        _ options: PublicKeyCredentialCreationOptionsJSON, _ change: (inout WebAuthnTestAuthenticator.Parts) -> Void = { _ in }
    ) -> RegistrationResponseJSON {
        authenticator.userHandle = options.user.id.bytes
        let (origin, rpID, flags, signCount) = (self.origin, options.rp.id ?? self.rpID, self.flags, self.signCount)
        return authenticator.registration(challenge: options.challenge.bytes) { parts in
            parts.origin = origin
            parts.rpIDHash = Array(SHA256.hash(data: Array(rpID.utf8)))
            parts.flags = flags.union(.attestedCredentialData)
            parts.signCount = signCount
            change(&parts)
        }
    }

    /// `navigator.credentials.get()` for `options`; `change` breaks one part of it.
    func get(
        _ options: PublicKeyCredentialRequestOptionsJSON, _ change: (inout WebAuthnTestAuthenticator.Parts) -> Void = { _ in }
    ) -> AuthenticationResponseJSON {
        let rpID = options.rpId ?? self.rpID
        return authenticator.assertion(challenge: options.challenge.bytes) { parts in
            parts.origin = origin
            parts.rpIDHash = Array(SHA256.hash(data: Array(rpID.utf8)))
            parts.flags = flags
            parts.signCount = signCount
            change(&parts)
        }
    }
}

/// The answers of the options calls, as the script reads them.
struct CreationOptionsAnswer: Decodable, Sendable {
    let ceremony: String
    let publicKey: PublicKeyCredentialCreationOptionsJSON
}

struct RequestOptionsAnswer: Decodable, Sendable {
    let ceremony: String
    let publicKey: PublicKeyCredentialRequestOptionsJSON
}

/// What the script posts to `POST /account/passkeys`.
struct RegistrationPost: Encodable, Sendable {
    let csrf: String
    let ceremony: String
    let credential: RegistrationResponseJSON
}

/// What the script posts to `POST /authorize/passkey`.
struct AssertionPost: Encodable, Sendable {
    let attempt: String
    let ceremony: String
    let credential: AuthenticationResponseJSON
}

extension TestServer.Answer {
    func decoded<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: data)
    }
}

/// A person on their account page (`<base>/account`), signed in by approving on their phone.
struct AccountSession: Sendable {
    let browser: AccountBrowser
    let user: EnrolledUser
    let csrf: String
    /// The tenant's base path: `""` or `/t/<slug>`.
    let base: String

    func page() async throws -> TestServer.Answer {
        let page = try await browser.get(base + "/account")
        #expect(page.status == 200, "\(page.text.prefix(500))")
        return page
    }

    /// A form post of the account page, with the session's CSRF token.
    func post(_ path: String, _ form: [(String, String)]) async throws -> TestServer.Answer {
        try await browser.post(base + path, [("csrf", csrf)] + form)
    }

    /// `POST /account/passkeys/options`, as the "Add a passkey" button asks.
    func creationOptions(name: String? = nil) async throws -> TestServer.Answer {
        try await browser.post(base + "/account/passkeys/options", [("csrf", csrf), ("name", name ?? "")])
    }

    /// `POST /account/passkeys` with the credential `create()` made.
    func add(ceremony: String, _ credential: RegistrationResponseJSON, csrf token: String? = nil) async throws
        -> TestServer.Answer
    {
        try await browser.post(
            base + "/account/passkeys", json: RegistrationPost(csrf: token ?? csrf, ceremony: ceremony, credential: credential))
    }

    /// The whole "Add a passkey": options, `create()`, and the post; the post's answer.
    @discardableResult
    func register(
        _ passkey: inout TestPasskey, name: String? = nil,
        _ change: (inout WebAuthnTestAuthenticator.Parts) -> Void = { _ in }
    ) async throws -> TestServer.Answer {
        let asked = try await creationOptions(name: name)
        #expect(asked.status == 200, "options: \(asked.text.prefix(500))")
        let options = try asked.decoded(CreationOptionsAnswer.self)
        return try await add(ceremony: options.ceremony, passkey.create(options.publicKey, change))
    }
}

/// A browser at the hosted sign-in page of one attempt.
struct HostedSignIn: Sendable {
    let browser: AccountBrowser
    /// The sign-in page as first shown.
    let page: TestServer.Answer
    let attempt: String
    let base: String

    /// `POST /authorize/passkey/options`, as the "Sign in with a passkey" button asks.
    func requestOptions() async throws -> TestServer.Answer {
        try await browser.post(base + "/authorize/passkey/options", [("attempt", attempt)])
    }

    /// `POST /authorize/passkey` with the credential `get()` returned.
    func finish(ceremony: String, _ credential: AuthenticationResponseJSON, attempt other: String? = nil) async throws
        -> TestServer.Answer
    {
        try await browser.post(
            base + "/authorize/passkey", json: AssertionPost(attempt: other ?? attempt, ceremony: ceremony, credential: credential))
    }

    /// The whole button press: options, `get()`, and the post; the post's answer.
    func signIn(
        with passkey: TestPasskey, _ change: (inout WebAuthnTestAuthenticator.Parts) -> Void = { _ in }
    ) async throws -> TestServer.Answer {
        let asked = try await requestOptions()
        #expect(asked.status == 200, "options: \(asked.text.prefix(500))")
        let options = try asked.decoded(RequestOptionsAnswer.self)
        return try await finish(ceremony: options.ceremony, passkey.get(options.publicKey, change))
    }
}

/// alice at her account page, on a server on either engine driven in memory, with the means to
/// register passkeys, sign in with them at the hosted page, and read what the server stored.
struct PasskeyBench: Sendable {
    let server: TestServer
    let send: AccountBrowser.Send
    let alice: AccountSession

    /// Runs `body` with alice signed in to the default tenant's account page. On PostgreSQL, or
    /// when `listening` (for the command line), the server also listens: its phones and the
    /// command line talk to it over HTTP, the browsers through the router.
    static func run(
        _ engine: Engine, listening: Bool = false, configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (PasskeyBench) async throws -> Void
    ) async throws {
        switch (engine, listening) {
        case (.sqlite, false):
            try await TestServer.routed(configure: configure) { server in
                try await body(try await make(server, send: { try await server.send($0) }))
            }
        default:
            try await TestServer.with(engine, configure: configure) { server in
                try await server.server.application.test(.router) { client in
                    try await body(try await make(server, send: { request in
                        let path = String(try #require(request.url?.absoluteString).dropFirst(server.base.count))
                        return try await TestServer.route(request, path: path, through: client)
                    }))
                }
            }
        }
    }

    private static func make(_ server: TestServer, send: @escaping AccountBrowser.Send) async throws -> PasskeyBench {
        let alice = try await server.enrolledUser("alice")
        return PasskeyBench(
            server: server, send: send, alice: try await signedIn(alice, base: "", at: server, through: send))
    }

    /// The RP ID of a tenant that sets none: the server's own, as it derives it from its public URL.
    static func relyingPartyID(of server: TestServer) -> String {
        PasskeySettings().relyingParty(tenantName: "", publicOrigin: server.base).id
    }

    /// A browser that has not been here before.
    func browser() -> AccountBrowser { AccountBrowser(base: server.base, send: send) }

    /// A passkey for this server's relying party.
    func passkey(backupEligible: Bool = false, signCount: UInt32 = 0) -> TestPasskey {
        TestPasskey(for: server, backupEligible: backupEligible, signCount: signCount)
    }

    // MARK: - Signing in

    /// `user` signed in to their account page at `<base>/account` in a new browser, by
    /// approving on their phone.
    func signedIn(_ user: EnrolledUser, base: String = "") async throws -> AccountSession {
        try await Self.signedIn(user, base: base, at: server, through: send)
    }

    private static func signedIn(
        _ user: EnrolledUser, base: String, at server: TestServer, through send: @escaping AccountBrowser.Send
    ) async throws -> AccountSession {
        let browser = AccountBrowser(base: server.base, send: send)
        let form = try await browser.get(base + "/account")
        let attempt = try #require(form.hidden("attempt"), "\(form.text.prefix(500))")
        let waiting = try await browser.post(base + "/authorize/sign-in", [("attempt", attempt), ("username", user.username)])
        #expect(waiting.text.contains("Approve on your phone"), "\(waiting.text.prefix(800))")
        let request = try #require(try await user.kit.pendingRequests().first)
        _ = try await user.kit.approve(try await user.kit.details(for: request))
        let back = try await browser.post(base + "/authorize/continue", [("attempt", attempt)])
        #expect(back.status == 303 && back.header("Location") == server.base + base + "/account", "\(back.text.prefix(500))")
        let page = try await browser.get(base + "/account")
        return AccountSession(browser: browser, user: user, csrf: try #require(page.hidden("csrf")), base: base)
    }

    /// A new attempt at the hosted sign-in for `client`, in `browser` (a new one by default).
    func openSignIn(
        _ client: CodeFlowClient, challenge: String, extra: [(String, String)] = [], base: String = "",
        browser: AccountBrowser? = nil
    ) async throws -> HostedSignIn {
        let browser = browser ?? self.browser()
        let page = try await browser.get(
            base + "/authorize" + TestServer.authorizationQuery(client, challenge: challenge, extra: extra))
        #expect(page.status == 200, "authorize: \(page.text.prefix(500))")
        // Without the phone's form (a request for the passkey class) the attempt is only the
        // passkey button's.
        let attempt = page.hidden("attempt") ?? page.text.firstMatch(of: /data-attempt="([^"]+)"/).map { String($0.1) }
        return HostedSignIn(browser: browser, page: page, attempt: try #require(attempt, "\(page.text.prefix(800))"), base: base)
    }

    /// A passkey registered for alice on her account page.
    func alicesPasskey(backupEligible: Bool = false, signCount: UInt32 = 0, name: String? = nil) async throws -> TestPasskey {
        var passkey = passkey(backupEligible: backupEligible, signCount: signCount)
        let added = try await alice.register(&passkey, name: name)
        #expect(added.status == 200, "add: \(added.text.prefix(500))")
        return passkey
    }

    /// The query parameters of `location` (the `redirect` a finished sign-in answers).
    static func parameters(of location: String?) -> [String: String] {
        var parameters: [String: String] = [:]
        for item in location.flatMap(URLComponents.init(string:))?.queryItems ?? [] { parameters[item.name] = item.value }
        return parameters
    }

    /// Redeems the code of `redirect` at the default tenant; the ID token's `acr`, `amr` and `sub`.
    func idToken(of redirect: String?, client: CodeFlowClient, verifier: String) async throws
        -> (acr: String?, amr: [String], sub: String?)
    {
        let code = try #require(Self.parameters(of: redirect)["code"], "no code in \(redirect ?? "nil")")
        let tokens = try await server.redeem(code, client: client, verifier: verifier)
        #expect(tokens.status == 200, "token: \(tokens.error ?? "") \(tokens.errorDescription ?? "")")
        let claims = try JSONValue(parsing: try CompactJWS(parsing: try #require(tokens["id_token"] as? String)).payload)
        guard case .array(let amr)? = claims["amr"] else { return (claims["acr"]?.stringValue, [], claims["sub"]?.stringValue) }
        return (claims["acr"]?.stringValue, amr.compactMap(\.stringValue), claims["sub"]?.stringValue)
    }

    // MARK: - Reading what the server stored

    /// The user's passkeys as the administration API lists them.
    func passkeys(of userID: String, tenant: String = "default") async throws -> [[String: any Sendable]] {
        let answer = try await server.admin("GET", "/admin/v1/tenants/\(tenant)/users/\(userID)/passkeys")
        #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        return try #require(answer["items"] as? [[String: any Sendable]])
    }

    /// The tenant's audit events of `action`, newest first.
    func audit(_ action: String, tenant: String = "default") async throws -> [[String: any Sendable]] {
        let answer = try await server.admin("GET", "/admin/v1/tenants/\(tenant)/audit?limit=200")
        #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        let items = try #require(answer["items"] as? [[String: any Sendable]])
        return items.filter { $0["action"] as? String == action }
    }

    /// Rows in `table`, to see that a refused ceremony stored nothing.
    func rows(_ table: String) async throws -> Int64 {
        try await server.database.first("SELECT COUNT(*) AS n FROM \(raw: table)", column: "n", as: Int64.self) ?? 0
    }

    /// Sets the tenant's `passkeys` policy member (the rest at its defaults).
    func setPasskeyPolicy(_ fields: [String: any Sendable], tenant: String = "default") async throws {
        try await server.setPolicy(["passkeys": fields], tenant: tenant)
    }
}
