import CountersignCore
import CountersignKit
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// The hosted sign-in in real Chromium, against the server listening on a free port, the phone
/// being an SDK enrollment: each test reads as what the person does. With
/// `COUNTERSIGN_SCREENSHOTS=1` the pages are saved to `docs/screenshots/` for the docs.
@Suite("Code flow in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct CodeFlowBrowserTests {
    @Test("Sign in by approving on the phone, matching the number the page shows; the code gives tokens that verify against /jwks")
    func signInByApprovingOnThePhone() async throws {
        try await TestServer.with(.sqlite) { server in
            let policy = try await server.admin(
                "PUT", "/admin/v1/tenants/default/authentication-policy",
                json: ["default_acr": "urn:countersign:acr:number-match"])
            #expect(policy.status == 200, "\(policy.errorDescription ?? "")")
            let client = try await server.createCodeFlowClient(redirectURI: "http://127.0.0.1/callback")
            let user = try await server.enrolledUser("alice")
            let verifier = CodeFlowClient.verifier()
            let browser = try await Browser.start(width: 420, height: 860)
            do {
                try await browser.open(server.base + "/authorize"
                    + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(verifier)))
                try await browser.waitFor(text: "to continue to Online banking")
                try await Self.screenshot(browser, "sign-in")
                try await browser.find("#username").type("alice")
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "Approve on your phone")
                let shown = try await browser.find("#match-number").text()
                try await Self.screenshot(browser, "sign-in-approve")

                // The phone shows where the request came from: this browser.
                let request = try #require(try await user.kit.pendingRequests().first)
                let details = try await user.kit.details(for: request)
                #expect(details.ipAddress == "127.0.0.1")
                #expect(details.transaction.context.userAgent?.contains("Chrome") == true)
                let outcome = try await user.kit.respond(
                    toDetails: details, with: ScriptedUser(number: { _ in .number(Int64(shown) ?? -1) }))
                guard case .approved = outcome else { Issue.record("the phone's answer was \(outcome)"); return }

                // The page notices by itself and goes back to the application.
                let landed = try await browser.waitForURL(where: { $0.hasPrefix("http://127.0.0.1/callback?") })
                let parameters = Dictionary(
                    uniqueKeysWithValues: (URLComponents(string: landed)?.queryItems ?? []).map { ($0.name, $0.value ?? "") })
                #expect(parameters["state"] == "xyz")
                #expect(parameters["iss"] == server.base)
                // The callback's port has no listener; the cookies are read back on the server's origin.
                try await browser.open(server.base + "/.well-known/openid-configuration")
                let cookies = try await browser.cookies()
                let session = try #require(cookies.first { $0.name == "countersign-session" })
                #expect(session.httpOnly && session.sameSite == "Lax" && session.path == "/")

                let tokens = try await server.redeem(try #require(parameters["code"]), client: client, verifier: verifier)
                #expect(tokens.status == 200, "\(tokens.errorDescription ?? "")")
                let claims = try await Self.verified(try #require(tokens["id_token"] as? String), server: server)
                #expect(claims["nonce"]?.stringValue == "n-0S6_WzA2Mj")
                #expect(claims["sub"]?.stringValue == user.userID)
                #expect(claims["acr"]?.stringValue == "urn:countersign:acr:number-match")
            } catch {
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
    }

    @Test("Denied on the phone, and a request that expires: each ends on its own page without a reload")
    func deniedAndExpired() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = try await server.createCodeFlowClient()
            let user = try await server.enrolledUser("alice")
            let browser = try await Browser.start()
            do {
                let query = TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
                try await browser.open(server.base + "/authorize" + query)
                try await browser.find("#username").type("alice")
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "Approve on your phone")
                let request = try #require(try await user.kit.pendingRequests().first)
                _ = try await user.kit.deny(try await user.kit.details(for: request))
                try await browser.waitFor(text: "Sign-in denied")
                try await Self.screenshot(browser, "sign-in-denied")
                #expect(try await browser.find("#return").attribute("href")?.contains("error=access_denied") == true)

                try await browser.open(server.base + "/authorize" + query)
                try await browser.find("#username").type("alice")
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "Approve on your phone")
                // Past the request's five minutes, within the sign-in's quarter of an hour.
                server.clock.advance(by: 301)
                try await browser.waitFor(text: "The request expired", timeout: .seconds(40))
                try await Self.screenshot(browser, "sign-in-expired")
                try await browser.find("#retry").click()
                try await browser.waitFor(text: "Approve on your phone")
            } catch {
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
    }

    /// The claims of an ES256 ID token whose signature verifies with a key of the issuer's JWKS.
    static func verified(_ token: String, server: TestServer) async throws -> JSONValue {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3)
        let header = try JSONValue(parsing: try #require(Data(base64URLEncoded: parts[0])))
        let keys = try #require(try await server.call("GET", "/jwks")["keys"] as? [[String: any Sendable]])
        let jwk = try #require(keys.first { $0["kid"] as? String == header["kid"]?.stringValue })
        #expect(header["alg"]?.stringValue == "ES256")
        let key = try ECPublicJWK(x: try #require(jwk["x"] as? String), y: try #require(jwk["y"] as? String)).signingKey()
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Data(base64URLEncoded: parts[2])))
        #expect(key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)), "the ID token verifies against /jwks")
        return try JSONValue(parsing: try #require(Data(base64URLEncoded: parts[1])))
    }

    static func screenshot(_ browser: Browser, _ name: String) async throws {
        guard ProcessInfo.processInfo.environment["COUNTERSIGN_SCREENSHOTS"] == "1" else { return }
        let folder = BuildProducts.packageRoot.appendingPathComponent("docs/screenshots")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try await browser.saveScreenshot(to: folder.appendingPathComponent("\(name).png").path)
    }
}
