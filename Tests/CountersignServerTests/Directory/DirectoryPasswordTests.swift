import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The directory password as a first factor, against a real OpenLDAP server (`SlapdHarness`):
/// the hosted sign-in of a client with `directory_password`, and a RADIUS client's User-Password
/// checked by radclient's requests, on both engines.
@Suite("Directory password before the push")
struct DirectoryPasswordTests {
    /// A server whose default tenant takes its users from `slapd`, synced once, with alice's phone enrolled.
    static func withDirectory(
        _ engine: Engine, radius: Bool = false,
        _ body: (TestServer, SlapdHarness, EnrolledUser) async throws -> Void
    ) async throws {
        guard let slapd = try await SlapdHarness.startIfAvailable() else { return }
        defer { slapd.shutdown() }
        try await TestServer.with(engine, configure: { if radius { $0.radiusPort = 0 } }) { server in
            let settings = try await server.admin("PUT", DirectorySyncTests.base, json: DirectorySyncTests.settings(slapd))
            #expect(settings.status == 201, "\(settings.errorDescription ?? "")")
            let synced = try await server.admin("POST", DirectorySyncTests.base + "/sync")
            #expect(synced.status == 200, "\(synced.errorDescription ?? "")")
            let aliceID = try #require(try await DirectorySyncTests.users(server)["alice"]?["id"] as? String)
            let alice = try await server.enrollDevice(for: aliceID, username: "alice", name: "alice's phone")
            try await body(server, slapd, alice)
        }
    }

    static let wrongAnswer = "The username or password is not right."

    @Test("hosted sign-in: a wrong password and an unknown user get one answer and send nothing; the right one sends the push, and the tokens say pwd",
          arguments: Engine.available)
    func hostedSignIn(engine: Engine) async throws {
        try await Self.withDirectory(engine) { server, _, alice in
            let client = try await server.createCodeFlowClient(extra: ["directory_password": true])
            let browser = PageVisitor(server)
            let verifier = CodeFlowClient.verifier()
            let query = TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(verifier))
            let page = try await browser.get("/authorize" + query)
            #expect(page.status == 200)
            #expect(page.text.contains("name=\"password\" type=\"password\" autocomplete=\"current-password\""), "\(page.text)")
            let attempt = try #require(page.hidden("attempt"))
            func signIn(_ username: String, _ password: String?) async throws -> TestServer.Answer {
                try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", username)]
                    + (password.map { [("password_asked", "yes"), ("password", $0)] } ?? []))
            }

            let wrong = try await signIn("alice", "not-her-password")
            #expect(wrong.status == 400)
            #expect(wrong.text.contains(Self.wrongAnswer))
            #expect(wrong.text.contains("value=\"alice\""), "the username stays filled in")
            let unknown = try await signIn("nobody", "any-password")
            #expect(unknown.status == 400)
            #expect(unknown.text.replacingOccurrences(of: "nobody", with: "alice") == wrong.text,
                    "an unknown user's page is the wrong password's")
            let empty = try await signIn("alice", "")
            #expect(empty.status == 400 && empty.text.contains("Enter your password."))
            // "Send a new request" posts the username alone: the form asks for the password again.
            let again = try await signIn("alice", nil)
            #expect(again.status == 200 && again.text.contains("name=\"password\"") && !again.text.contains("password-error"))
            #expect(try await alice.kit.pendingRequests().isEmpty, "no push before the password")

            let waiting = try await signIn("alice", DirectoryFixture.password("alice"))
            #expect(waiting.text.contains("Approve on your phone"), "\(waiting.text.prefix(600))")
            let request = try #require(try await alice.kit.pendingRequests().first)
            _ = try await alice.kit.approve(try await alice.kit.details(for: request))
            let back = try await browser.post("/authorize/continue", [("attempt", attempt)])
            #expect(back.status == 303)
            let tokens = try await server.redeem(
                try #require(back.redirectParameters["code"]), client: client, verifier: verifier)
            let claims = try JSONValue(parsing: try CompactJWS(parsing: try #require(tokens["id_token"] as? String)).payload)
            guard case .array(let methods)? = claims["amr"] else { Issue.record("amr is not an array"); return }
            let amr = methods.compactMap(\.stringValue)
            #expect(amr.first == "pwd" && amr.contains("pop") && amr.contains("mfa"), "\(amr)")

            // That session answers the client's next request at once; a session begun without
            // the password (at a client that does not ask for it) does not.
            let next = try await browser.get("/authorize" + query)
            #expect(next.status == 303 && next.redirectParameters["code"] != nil)
            let plain = try await server.createCodeFlowClient()
            let other = PageVisitor(server)
            let plainBack = try await server.signIn(
                other, client: plain, user: alice, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            #expect(plainBack.status == 303)
            let asked = try await other.get("/authorize" + query)
            #expect(asked.status == 200 && asked.text.contains("name=\"password\""), "a session without pwd signs in again")
        }
    }

    @Test("ten wrong passwords hold the username back, even from the right one, until the window passes")
    func throttled() async throws {
        try await Self.withDirectory(.sqlite) { server, _, alice in
            let client = try await server.createCodeFlowClient(extra: ["directory_password": true])
            let browser = PageVisitor(server)
            let page = try await browser.get("/authorize" + TestServer.authorizationQuery(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
            let attempt = try #require(page.hidden("attempt"))
            for guess in 0..<DirectoryPasswords.failuresPerUser {
                let answer = try await browser.post(
                    "/authorize/sign-in", [("attempt", attempt), ("username", "alice"), ("password", "guess-\(guess)")])
                #expect(answer.status == 400 && answer.text.contains(Self.wrongAnswer))
            }
            let held = try await browser.post(
                "/authorize/sign-in", [("attempt", attempt), ("username", "alice"), ("password", DirectoryFixture.password("alice"))])
            #expect(held.status == 429, "\(held.text.prefix(300))")
            #expect(try await alice.kit.pendingRequests().isEmpty)
            server.clock.advance(by: DirectoryPasswords.window + 1)
            // The attempt has expired meanwhile (it lives as long): a new one.
            let fresh = try await browser.get("/authorize" + TestServer.authorizationQuery(
                client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
            let later = try await browser.post("/authorize/sign-in", [
                ("attempt", try #require(fresh.hidden("attempt"))), ("username", "alice"),
                ("password", DirectoryFixture.password("alice"))])
            #expect(later.text.contains("Approve on your phone"), "\(later.text.prefix(300))")
        }
    }

    @Test("RADIUS push mode: User-Password is the directory password; wrong and unknown get one Reject and no push; a directory that is down is said to be",
          arguments: Engine.available)
    func radius(engine: Engine) async throws {
        guard RADClient.executable != nil else { return }
        try await Self.withDirectory(engine, radius: true) { server, slapd, alice in
            _ = try await server.createRADIUSClient(extra: ["directory_password": true])
            let radius = RADClient(port: try await server.radiusPort(), secret: RADIUSServerTests.secret)

            let wrong = try #require(try await radius.send(RADClient.login("alice", password: "push")))
            #expect(wrong.code == "Access-Reject" && wrong.replyMessage == Self.wrongAnswer)
            let unknown = try #require(try await radius.send(RADClient.login("nobody", password: "whatever")))
            #expect(unknown.code == "Access-Reject" && unknown.replyMessage == Self.wrongAnswer)
            #expect(try await alice.kit.pendingRequests().isEmpty)

            async let answer = radius.send(RADClient.login("alice", password: DirectoryFixture.password("alice")))
            let details = try await RADIUSServerTests.pending(alice.kit)
            _ = try await alice.kit.approve(details)
            #expect(try await answer?.code == "Access-Accept")

            slapd.stop()
            let down = try #require(try await radius.send(RADClient.login("alice", password: DirectoryFixture.password("alice"))))
            #expect(down.code == "Access-Reject" && down.replyMessage?.contains("cannot be checked just now") == true,
                    "\(down.attributes)")
        }
    }

    @Test("RADIUS push-number mode: the password first, then the challenge with the number")
    func radiusChallenge() async throws {
        guard RADClient.executable != nil else { return }
        try await Self.withDirectory(.sqlite, radius: true) { server, _, alice in
            _ = try await server.createRADIUSClient(mode: "push-number", extra: ["directory_password": true])
            let radius = RADClient(port: try await server.radiusPort(), secret: RADIUSServerTests.secret)
            let wrong = try #require(try await radius.send(RADClient.login("alice", password: "push")))
            #expect(wrong.code == "Access-Reject" && wrong.replyMessage == Self.wrongAnswer)
            let challenge = try #require(try await radius.send(RADClient.login("alice", password: DirectoryFixture.password("alice"))))
            #expect(challenge.code == "Access-Challenge", "\(challenge.attributes)")
            #expect(challenge.replyMessage?.hasPrefix("Approve on your phone and choose") == true)
        }
    }

    @Test("directory_password needs the tenant's directory, and a RADIUS client's needs the push or push-number mode: 400 naming the field")
    func settings() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = try await server.admin(
                "POST", "/admin/v1/tenants/default/clients", json: ["name": "Portal", "directory_password": true])
            #expect(client.status == 400 && client.errorDescription?.contains("directory_password") == true,
                    "\(client.errorDescription ?? "")")
            let radius = try await server.admin("POST", "/admin/v1/tenants/default/radius-clients", json: [
                "name": "VPN", "networks": ["127.0.0.1/32"], "mode": "passcode", "directory_password": true])
            #expect(radius.status == 400 && radius.errorDescription?.contains("push and push-number") == true,
                    "\(radius.errorDescription ?? "")")
            let noDirectory = try await server.admin("POST", "/admin/v1/tenants/default/radius-clients", json: [
                "name": "VPN", "networks": ["127.0.0.1/32"], "directory_password": true])
            #expect(noDirectory.status == 400 && noDirectory.errorDescription?.contains("needs the tenant's directory") == true)
            let clients = try await server.admin("GET", "/admin/v1/tenants/default/clients")
            #expect((clients["items"] as? [Any])?.isEmpty == true, "nothing was created")
        }
    }
}
