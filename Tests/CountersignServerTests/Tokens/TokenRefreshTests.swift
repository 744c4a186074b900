import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// `offline_access` and `grant_type=refresh_token`: rotation, reuse, scope, expiry.
@Suite("Refresh tokens")
struct TokenRefreshTests {
    @Test("a refresh token comes only with offline_access")
    func refreshTokenOnlyWithOfflineAccess() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let plain = try await server.approvedTokens(client, user: alice, scope: "openid")
            #expect(plain["refresh_token"] == nil)
            let offline = try await server.approvedTokens(client, user: alice, scope: "openid offline_access")
            #expect(try offline.string("refresh_token").hasPrefix("csr_"))
            #expect(try offline.string("scope") == "openid offline_access")
        }
    }

    @Test("a client whose registration lost offline_access gets no refresh token")
    func noRefreshTokenAfterOfflineAccessWithdrawn() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let started = try await server.bcAuthorize(client, [("scope", "openid offline_access"), ("login_hint", "alice")])
            let authReqID = try started.string("auth_req_id")
            _ = try await alice.device.decideNewest(.approve)
            let updated = try await server.admin("PATCH", "/admin/v1/tenants/default/clients/\(client.id)",
                                                 json: ["scopes": ["openid"]])
            #expect(updated.status == 200, "\(updated.errorDescription ?? "")")
            let tokens = try await server.token(client, authReqID)
            #expect(tokens.status == 200)
            #expect(tokens["refresh_token"] == nil)
        }
    }

    @Test("a refresh rotates: a new refresh token, access token and ID token of the same approval")
    func refreshRotates() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let first = try await server.approvedTokens(client, user: alice)
            let keys = try await server.jwks()
            let original = try server.verifiedClaims(try first.string("id_token"), keys: keys).claims

            server.clock.advance(by: 3600)
            let refreshed = try await server.refresh(client, try first.string("refresh_token"))
            #expect(refreshed.status == 200, "\(refreshed.error ?? "") \(refreshed.errorDescription ?? "")")
            #expect(refreshed.header("Cache-Control") == "no-store")
            #expect(try refreshed.string("refresh_token") != (try first.string("refresh_token")))
            #expect(try refreshed.string("access_token") != (try first.string("access_token")))
            #expect(try refreshed.string("scope") == "openid offline_access")
            #expect(refreshed["expires_in"] as? Int == 600)

            let identity = try server.verifiedClaims(try refreshed.string("id_token"), keys: keys)
            #expect(identity.type == "JWT")
            for claim in ["sub", "aud", "iss", "acr"] {
                #expect(identity.claims[claim] as? String == original[claim] as? String, "\(claim)")
            }
            #expect(identity.claims["auth_time"] as? Int == original["auth_time"] as? Int)
            #expect(identity.claims["amr"] as? [String] == original["amr"] as? [String])
            #expect((identity.claims["iat"] as? Int ?? 0) >= (original["iat"] as? Int ?? 0) + 3600)

            let access = try server.verifiedClaims(try refreshed.string("access_token"), keys: keys)
            #expect(access.type == "at+jwt")
            #expect(access.claims["sub"] as? String == alice.userID)

            let next = try await server.refresh(client, try refreshed.string("refresh_token"))
            #expect(next.status == 200)
        }
    }

    @Test("a used refresh token presented again revokes its whole family")
    func reuseRevokesTheFamily() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let first = try await server.approvedTokens(client, user: alice)
            let used = try first.string("refresh_token")
            let second = try await server.refresh(client, used)
            #expect(second.status == 200)

            let replay = try await server.refresh(client, used)
            #expect(replay.status == 400)
            #expect(replay.error == "invalid_grant")
            #expect(replay.errorDescription?.contains("already used") == true)

            let successor = try await server.refresh(client, try second.string("refresh_token"))
            #expect(successor.status == 400)
            #expect(successor.error == "invalid_grant")
            #expect(try await server.introspect(client, try second.string("access_token"))["active"] as? Bool == false)
            #expect(try await server.auditActions().filter { $0 == "refresh_token.reused" }.count == 1)
        }
    }

    @Test("two concurrent uses of one refresh token: one succeeds, the other counts as reuse", arguments: Engine.available)
    func concurrentUseCountsAsReuse(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let token = try await server.approvedTokens(client, user: alice).string("refresh_token")
            let answers = try await withThrowingTaskGroup(of: TestServer.Answer.self) { group in
                for _ in 0..<2 { group.addTask { try await server.refresh(client, token) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.map(\.status).sorted() == [200, 400])
            let winner = try #require(answers.first { $0.status == 200 })
            #expect(answers.first { $0.status == 400 }?.error == "invalid_grant")
            let after = try await server.refresh(client, try winner.string("refresh_token"))
            #expect(after.error == "invalid_grant", "the winner's token went with the family")
        }
    }

    @Test("a refresh may narrow the scope; the refresh token keeps the grant's scope")
    func narrowingScope() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient(extraScopes: ["payments"])
            let alice = try await server.enrolledUser("alice")
            let first = try await server.approvedTokens(client, user: alice, scope: "openid offline_access payments")
            let narrowed = try await server.refresh(client, try first.string("refresh_token"), scope: "payments")
            #expect(narrowed.status == 200, "\(narrowed.errorDescription ?? "")")
            #expect(try narrowed.string("scope") == "payments")
            #expect(narrowed["id_token"] == nil, "no openid, no ID token")
            let keys = try await server.jwks()
            #expect(try server.verifiedClaims(try narrowed.string("access_token"), keys: keys).claims["scope"] as? String == "payments")

            let full = try await server.refresh(client, try narrowed.string("refresh_token"))
            #expect(try full.string("scope") == "openid offline_access payments")
        }
    }

    @Test("a refresh may not widen the scope: invalid_scope, and the token stays usable")
    func wideningScopeIsRefused() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient(extraScopes: ["payments"])
            let alice = try await server.enrolledUser("alice")
            let token = try await server.approvedTokens(client, user: alice).string("refresh_token")
            for scope in ["openid payments", "openid offline_access profile", "openid \"quoted\""] {
                let answer = try await server.refresh(client, token, scope: scope)
                #expect(answer.status == 400, "\(scope)")
                #expect(answer.error == "invalid_scope", "\(scope): \(answer.errorDescription ?? "")")
            }
            #expect(try await server.refresh(client, token).status == 200)
        }
    }

    @Test("another client's refresh token is invalid_grant and stays usable by its client")
    func otherClientsTokenIsInvalidGrant() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let other = try await server.offlineClient(name: "Other")
            let alice = try await server.enrolledUser("alice")
            let token = try await server.approvedTokens(client, user: alice).string("refresh_token")
            let stolen = try await server.refresh(other, token)
            #expect(stolen.status == 400)
            #expect(stolen.error == "invalid_grant")
            #expect(stolen.errorDescription == "refresh_token is unknown or was issued to another client")
            #expect(try await server.refresh(client, token).status == 200)
        }
    }

    @Test("refresh requests without a usable token get their exact error")
    func refreshRequestErrors() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let cases: [(String, [(String, String)], String)] = [
                ("no refresh_token", [("grant_type", "refresh_token")], "invalid_request"),
                ("unknown refresh_token", [("grant_type", "refresh_token"), ("refresh_token", "csr_nope")], "invalid_grant"),
                ("an access token as refresh_token", [("grant_type", "refresh_token"), ("refresh_token", "a.b.c")], "invalid_grant"),
                ("another grant type", [("grant_type", "client_credentials")], "unsupported_grant_type"),
            ]
            for (name, parameters, error) in cases {
                let answer = try await server.form("/token", parameters, basic: client)
                #expect(answer.status == 400, "\(name)")
                #expect(answer.error == error, "\(name): \(answer.errorDescription ?? "")")
                #expect(answer.header("Cache-Control") == "no-store", "\(name)")
            }
        }
    }

    @Test("a refresh token unused for 14 days has expired")
    func idleExpiry() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let token = try await server.approvedTokens(client, user: alice).string("refresh_token")
            server.clock.advance(by: 14 * 86_400 + 1)
            let answer = try await server.refresh(client, token)
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_grant")
            #expect(answer.errorDescription == "refresh_token has expired")
        }
    }

    @Test("a family ends 30 days after the approval, however often it is refreshed")
    func absoluteExpiry() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            var token = try await server.approvedTokens(client, user: alice).string("refresh_token")
            for _ in 0..<2 {
                server.clock.advance(by: 13 * 86_400)
                let answer = try await server.refresh(client, token)
                #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
                token = try answer.string("refresh_token")
            }
            server.clock.advance(by: 4 * 86_400 + 1)
            let late = try await server.refresh(client, token)
            #expect(late.error == "invalid_grant")
            #expect(late.errorDescription == "refresh_token has expired")
        }
    }

    @Test("a refresh for a disabled or deleted user is invalid_grant")
    func unavailableUserIsInvalidGrant() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let bob = try await server.enrolledUser("bob")
            let aliceToken = try await server.approvedTokens(client, user: alice).string("refresh_token")
            let bobToken = try await server.approvedTokens(client, user: bob).string("refresh_token")
            let users = "/admin/v1/tenants/default/users"
            #expect(try await server.admin("PATCH", "\(users)/\(alice.userID)", json: ["status": "disabled"]).status == 200)
            #expect(try await server.admin("DELETE", "\(users)/\(bob.userID)").status == 204)
            for token in [aliceToken, bobToken] {
                let answer = try await server.refresh(client, token)
                #expect(answer.status == 400)
                #expect(answer.error == "invalid_grant")
            }
        }
    }
}
