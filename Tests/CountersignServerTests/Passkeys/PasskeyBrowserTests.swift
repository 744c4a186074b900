import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// Passkeys in real Chromium, with a WebDriver virtual authenticator for the laptop's
/// fingerprint reader, against the server listening on a free port. Browsers refuse an IP
/// address as RP ID, so the server listens on `localhost`: its public origin, its default RP ID
/// and its cookies are then `localhost`'s, which browsers count as a secure context over plain
/// http. With `COUNTERSIGN_SCREENSHOTS=1` the account's passkeys and the sign-in page are saved
/// to `docs/screenshots/` for the docs.
@Suite("Passkeys in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct PasskeyBrowserTests {
    static let passkeyACR = PasskeyClass.urn

    @Test("Add a passkey named Laptop on the account page: the laptop keeps a discoverable credential for localhost, and the passkey can be renamed")
    func addAndRenameAPasskeyOnTheAccountPage() async throws {
        try await Self.onLocalhost { server, browser, authenticator in
            let user = try await server.enrolledUser("alice")
            try await Self.signInToTheAccount(user, server: server, browser: browser)
            let passkey = try await Self.addPasskey("Laptop", browser: browser)
            // Over plain http the session cookie goes without `Secure` and the `__Host-` prefix,
            // and localhost keeps it for itself.
            let session = try #require(try await browser.cookies().first { $0.name == "countersign-session" })
            #expect(session.domain == "localhost" && !session.secure && session.httpOnly && session.sameSite == "Lax")

            let held = try await authenticator.credentials()
            #expect(held.count == 1)
            let credential = try #require(held.first)
            #expect(credential.isResidentCredential)
            #expect(credential.rpId == "localhost")
            let handle = try await server.database.first(
                "SELECT handle FROM passkey_user_handles WHERE user_id = \(user.userID)", column: "handle", as: Data.self)
            #expect(credential.userHandle != nil && credential.userHandle == handle?.base64URLEncodedString,
                    "the laptop keeps the user handle the server made for alice")
            let listed = try await server.admin("GET", "/admin/v1/tenants/default/users/\(user.userID)/passkeys")
            let records = try #require(listed["items"] as? [[String: any Sendable]])
            #expect(records.map { $0["credential_id"] as? String } == [credential.credentialId])
            try await browser.execute(script: "document.getElementById('passkeys-heading').scrollIntoView()")
            try await AccountBrowserTests.saveForDocs(try await browser.screenshot(), "account-passkeys")

            let name = try await browser.find("#passkey-name-\(passkey)")
            try await name.clear()
            try await name.type("Work laptop")
            try await browser.find("#rename-passkey-\(passkey)").click()
            try await browser.waitFor(text: "Passkey renamed: Work laptop")
            #expect(try await browser.find("#passkey-\(passkey) h3").text() == "Work laptop")
        }
    }

    @Test("Chromium's virtual authenticators against the passkey rules: a synced passkey is refused where only device-bound ones are allowed, and a model once denied is refused, the reason shown beside the button")
    func passkeyRulesInTheBrowser() async throws {
        try await Self.onLocalhost { server, browser, laptop in
            let user = try await server.enrolledUser("alice")
            try await server.setPolicy(["passkeys": ["device_bound_only": true]])
            try await laptop.remove()
            let synced = try await browser.addVirtualAuthenticator(.init(defaultBackupEligibility: true))
            try await Self.signInToTheAccount(user, server: server, browser: browser)
            try await browser.find("#add-passkey").click()
            try await browser.waitFor(css: "#passkey-add-error:not([hidden])")
            #expect(try await browser.find("#passkey-add-error").text()
                    == "This authenticator is not allowed here: it may be synced, and only device-bound passkeys are allowed.")
            let stored = try await server.admin("GET", "/admin/v1/tenants/default/users/\(user.userID)/passkeys")
            #expect((stored["items"] as? [Any])?.isEmpty == true, "nothing stored")

            try await synced.remove()
            let key = try await browser.addVirtualAuthenticator()
            _ = try await Self.addPasskey("Security key", browser: browser)
            let listed = try await server.admin("GET", "/admin/v1/tenants/default/users/\(user.userID)/passkeys")
            let first = try #require((listed["items"] as? [[String: any Sendable]])?.first)
            #expect(first["backup_eligible"] as? Bool == false)
            let model = try #require(first["aaguid"] as? String, "the AAGUID Chromium's authenticator reported")

            try await server.setPolicy(["passkeys": ["denied_aaguids": [model]]])
            // Another authenticator of the same model: the first would refuse to make a second
            // passkey for the account it holds one of.
            try await key.remove()
            _ = try await browser.addVirtualAuthenticator()
            try await browser.find("#add-passkey").click()
            try await browser.waitFor(css: "#passkey-add-error:not([hidden])")
            #expect(try await browser.find("#passkey-add-error").text()
                    == "This authenticator is not allowed here: its model, \(model), is denied.")
            let findings = try await server.admin("GET", "/admin/v1/tenants/default/passkey-findings")
            let finding = try #require((findings["items"] as? [[String: any Sendable]])?.first, "\(findings.text)")
            #expect(finding["findings"] as? [String] == ["its model, \(model), is denied"])
        }
    }

    @Test("Adding a passkey more than ten minutes after signing in asks for a sign-in again, then the passkey is added")
    func addingAPasskeyLongAfterSigningInAsksToSignInAgain() async throws {
        try await Self.onLocalhost { server, browser, authenticator in
            let user = try await server.enrolledUser("alice")
            try await Self.signInToTheAccount(user, server: server, browser: browser)
            server.clock.advance(by: AccountFlow.freshSignIn + 60)
            try await browser.find("#passkey-new-name").type("Laptop")
            try await browser.find("#add-passkey").click()

            try await browser.waitForURL(where: { $0 == server.base + "/account/passkeys/sign-in-again" })
            #expect(try await browser.find("#username").property("value", as: String.self) == "alice")
            #expect(try await authenticator.credentials().isEmpty, "nothing is created before the sign-in")
            try await browser.find("#continue").click()
            try await browser.approveOnThePhone(user)
            try await browser.waitForURL(where: { $0 == server.base + "/account" })
            _ = try await Self.addPasskey("Laptop", browser: browser)
            #expect(try await authenticator.credentials().count == 1)
        }
    }

    @Test("Sign out, then sign in to an application with the passkey without typing a username: the ID token says passkey, hwk, user and mfa")
    func signInWithAPasskeyWithoutAUsername() async throws {
        try await Self.onLocalhost { server, browser, _ in
            let user = try await Self.signedOutWithALaptopPasskey(server: server, browser: browser)

            let client = try await server.createCodeFlowClient(redirectURI: "http://127.0.0.1/callback")
            let verifier = CodeFlowClient.verifier()
            try await browser.open(server.base + "/authorize"
                + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(verifier)))
            try await browser.waitFor(css: "#passkey-sign-in")
            try await browser.waitFor(text: "to continue to Online banking")
            try await CodeFlowBrowserTests.screenshot(browser, "sign-in-passkey")
            #expect(try await browser.find("#username").property("value", as: String.self) == "")
            try await browser.find("#passkey-sign-in").click()

            let code = try await Self.code(at: browser, client: client)
            let tokens = try await server.redeem(code, client: client, verifier: verifier)
            #expect(tokens.status == 200, "\(tokens.errorDescription ?? "")")
            let claims = try await CodeFlowBrowserTests.verified(try #require(tokens["id_token"] as? String), server: server)
            #expect(claims["sub"]?.stringValue == user.userID)
            #expect(claims["acr"]?.stringValue == Self.passkeyACR)
            guard case .array(let amr)? = claims["amr"] else { Issue.record("no amr in the ID token"); return }
            let methods = Set(amr.compactMap(\.stringValue))
            #expect(methods.isSuperset(of: ["hwk", "user", "mfa"]), "amr: \(methods)")
        }
    }

    @Test("An application that asks for a passkey gets no username field, and is refused while the laptop cannot verify the user")
    func aRequestForAPasskeyNeedsUserVerification() async throws {
        try await Self.onLocalhost { server, browser, authenticator in
            _ = try await Self.signedOutWithALaptopPasskey(server: server, browser: browser)

            let client = try await server.createCodeFlowClient(redirectURI: "http://127.0.0.1/callback")
            let verifier = CodeFlowClient.verifier()
            let query = TestServer.authorizationQuery(
                client, challenge: CodeFlowClient.challenge(verifier), extra: [("acr_values", Self.passkeyACR)])
            try await browser.open(server.base + "/authorize" + query)
            try await browser.waitFor(css: "#passkey-sign-in")
            #expect(try await browser.findAll("#username").isEmpty, "no username field when the application asks for a passkey")

            try await authenticator.setUserVerified(false)
            try await browser.find("#passkey-sign-in").click()
            let refusal = try await Self.passkeyError(browser)
            #expect(refusal.contains("needs your passkey to verify it is you"), "the page says why: \(refusal)")
            #expect(try await browser.currentURL().hasPrefix(server.base + "/authorize"), "the browser stays on the sign-in page")
            try await browser.open(server.base + "/account")
            try await browser.waitFor(css: "#username")  // no session: the account asks for a sign-in

            try await authenticator.setUserVerified(true)
            try await browser.open(server.base + "/authorize" + query)
            try await browser.find("#passkey-sign-in").click()
            let code = try await Self.code(at: browser, client: client)
            let tokens = try await server.redeem(code, client: client, verifier: verifier)
            #expect(tokens.status == 200, "\(tokens.errorDescription ?? "")")
            let claims = try await CodeFlowBrowserTests.verified(try #require(tokens["id_token"] as? String), server: server)
            #expect(claims["acr"]?.stringValue == Self.passkeyACR)
        }
    }

    @Test("A passkey removed on the account page no longer signs in, though the laptop still holds it")
    func aRemovedPasskeyNoLongerSignsIn() async throws {
        try await Self.onLocalhost { server, browser, authenticator in
            let user = try await server.enrolledUser("alice")
            try await Self.signInToTheAccount(user, server: server, browser: browser)
            let passkey = try await Self.addPasskey("Laptop", browser: browser)
            try await browser.find("#remove-passkey-\(passkey)").click()
            try await browser.waitFor(text: "Passkey removed: Laptop")
            #expect(try await browser.findAll("#passkey-\(passkey)").isEmpty)
            try await Self.signOut(server: server, browser: browser)
            #expect(try await authenticator.credentials().count == 1, "the laptop still holds the credential")

            let client = try await server.createCodeFlowClient(redirectURI: "http://127.0.0.1/callback")
            try await browser.open(server.base + "/authorize"
                + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
            try await browser.find("#passkey-sign-in").click()
            let refusal = try await Self.passkeyError(browser)
            #expect(refusal == WebAuthnError.unknownCredential.description)
        }
    }

    @Test("Where the browser offers passkeys in the username field, picking the passkey there signs in without the button")
    func signInFromTheUsernameFieldsAutofill() async throws {
        try await Self.onLocalhost(passkeyAutofill: true) { server, browser, _ in
            let user = try await Self.signedOutWithALaptopPasskey(server: server, browser: browser)

            let client = try await server.createCodeFlowClient(redirectURI: "http://127.0.0.1/callback")
            let verifier = CodeFlowClient.verifier()
            // The virtual authenticator picks the passkey offered in the field's autofill.
            try await browser.open(server.base + "/authorize"
                + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(verifier)))
            let code = try await Self.code(at: browser, client: client)
            let tokens = try await server.redeem(code, client: client, verifier: verifier)
            #expect(tokens.status == 200, "\(tokens.errorDescription ?? "")")
            let claims = try await CodeFlowBrowserTests.verified(try #require(tokens["id_token"] as? String), server: server)
            #expect(claims["sub"]?.stringValue == user.userID)
            #expect(claims["acr"]?.stringValue == Self.passkeyACR)
        }
    }

    // MARK: - Steps

    /// Runs `body` with a server whose public origin is `http://localhost:<port>` and a browser
    /// holding one virtual authenticator; keeps a screenshot when it fails.
    ///
    /// Chromium's virtual authenticators answer a conditional request at once, as if the person
    /// had picked the passkey in the username field's autofill, and the sign-in page makes one
    /// as it loads. So that a test clicks "Sign in with a passkey" itself, the browser offers no
    /// passkey autofill unless `passkeyAutofill`.
    static func onLocalhost(
        passkeyAutofill: Bool = false, _ body: (TestServer, Browser, Browser.VirtualAuthenticator) async throws -> Void
    ) async throws {
        try await TestServer.with(.sqlite, configure: { $0.host = "localhost" }) { server in
            try #require(server.base.hasPrefix("http://localhost:"), "the public origin is \(server.base)")
            let browser = try await Browser.start(width: 420, height: 900)
            do {
                if !passkeyAutofill {
                    try await browser.runBeforeEveryPage("""
                        if (window.PublicKeyCredential) {
                          PublicKeyCredential.isConditionalMediationAvailable = function () { return Promise.resolve(false); };
                        }
                        """)
                }
                try await body(server, browser, try await browser.addVirtualAuthenticator())
            } catch {
                await keepFailure(browser)
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
    }

    /// Signs `user` in to the account page by approving on the phone.
    static func signInToTheAccount(_ user: EnrolledUser, server: TestServer, browser: Browser) async throws {
        try await browser.open(server.base + "/account")
        try await browser.signInByPhone(user)
        try await browser.waitForURL(where: { $0 == server.base + "/account" })
        try await browser.waitFor(text: "Your passkeys")
    }

    /// Approves the request the waiting page shows with the SDK phone.
    /// Adds a passkey called `name` on the account page, and returns its id once the page lists it.
    static func addPasskey(_ name: String, browser: Browser) async throws -> String {
        try await browser.find("#passkey-new-name").type(name)
        try await browser.find("#add-passkey").click()
        try await browser.waitFor(text: "Passkey added: \(name)")
        let card = try await browser.waitFor(css: "article.passkey")
        #expect(try await browser.find("article.passkey h3").text() == name)
        return String(try #require(try await card.attribute("id")).dropFirst("passkey-".count))
    }

    /// alice, who signed in on her phone, added the passkey "Laptop" and signed out again.
    static func signedOutWithALaptopPasskey(server: TestServer, browser: Browser) async throws -> EnrolledUser {
        let user = try await server.enrolledUser("alice")
        try await signInToTheAccount(user, server: server, browser: browser)
        _ = try await addPasskey("Laptop", browser: browser)
        try await signOut(server: server, browser: browser)
        return user
    }

    /// Signs out with the account page's link.
    static func signOut(server: TestServer, browser: Browser) async throws {
        try await browser.find("#sign-out").click()
        try await browser.waitFor(text: "You are signed out")
    }

    /// The code of the redirect to the client, once the browser lands there.
    static func code(at browser: Browser, client: CodeFlowClient) async throws -> String {
        let landed = try await browser.waitForURL(where: { $0.hasPrefix(client.redirectURI + "?") })
        let parameters = Dictionary(
            uniqueKeysWithValues: (URLComponents(string: landed)?.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(parameters["state"] == "xyz")
        return try #require(parameters["code"], "no code in \(landed)")
    }

    /// The refusal the sign-in page shows beside the passkey button, once it shows one.
    static func passkeyError(_ browser: Browser) async throws -> String {
        try await browser.waitFor(css: "#passkey-error:not([hidden])")
        return try await browser.find("#passkey-error").text()
    }

    static func keepFailure(_ browser: Browser) async {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("passkey-failure-\(UUID().uuidString).png").path
        if (try? await browser.saveScreenshot(to: path)) != nil { print("PasskeyBrowserTests: the failing page is in \(path)") }
    }
}
