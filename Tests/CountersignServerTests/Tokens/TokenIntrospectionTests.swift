import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// `POST /introspect` (RFC 7662).
@Suite("Token introspection")
struct TokenIntrospectionTests {
    @Test("a valid access token is active, with its claims, to any client of the tenant")
    func validAccessTokenIsActive() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let resourceServer = try await server.createClient(name: "Payments API")
            let alice = try await server.enrolledUser("alice")
            let tokens = try await server.approvedTokens(client, user: alice)
            let keys = try await server.jwks()
            let claims = try server.verifiedClaims(try tokens.string("access_token"), keys: keys).claims

            let answer = try await server.introspect(resourceServer, try tokens.string("access_token"))
            #expect(answer.status == 200)
            #expect(answer.header("Cache-Control") == "no-store")
            #expect(answer["active"] as? Bool == true)
            #expect(answer["token_type"] as? String == "Bearer")
            #expect(answer["scope"] as? String == "openid offline_access")
            #expect(answer["client_id"] as? String == client.id)
            #expect(answer["sub"] as? String == alice.userID)
            #expect(answer["iss"] as? String == server.base)
            #expect(answer["aud"] as? String == client.id)
            for claim in ["exp", "iat", "auth_time"] { #expect(answer[claim] as? Int == claims[claim] as? Int, "\(claim)") }
            #expect(answer["acr"] as? String == claims["acr"] as? String)
            #expect(answer["amr"] as? [String] == claims["amr"] as? [String])
        }
    }

    @Test("anything but a valid token is {\"active\": false} and nothing more")
    func invalidTokensAreInactive() async throws {
        try await TestServer.routed { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let acmeClient = try await server.createClient(scopes: ["openid"], tenant: "acme")
            let acmeBob = try await server.enrolledUser("bob", tenant: "acme")
            let acmeTokens = try await server.approvedTokens(acmeClient, user: acmeBob, scope: "openid", tenantPath: "/t/acme")
            let expired = try await server.approvedTokens(client, user: alice, scope: "openid")
            server.clock.advance(by: 601)
            let revoked = try await server.approvedTokens(client, user: alice, scope: "openid")
            #expect(try await server.revoke(client, try revoked.string("access_token")).status == 200)
            let current = try await server.approvedTokens(client, user: alice, scope: "openid")
            let accessToken = try current.string("access_token")
            var tampered = Array(accessToken)
            tampered[tampered.count - 5] = tampered[tampered.count - 5] == "A" ? "B" : "A"

            let cases: [(String, String)] = [
                ("expired", try expired.string("access_token")),
                ("garbage", "garbage"),
                ("another tenant's", try acmeTokens.string("access_token")),
                ("revoked", try revoked.string("access_token")),
                ("an ID token", try current.string("id_token")),
                ("a bad signature", String(tampered)),
            ]
            for (name, token) in cases {
                let answer = try await server.introspect(client, token)
                #expect(answer.status == 200, "\(name)")
                #expect(String(decoding: answer.data, as: UTF8.self) == #"{"active":false}"#, "\(name)")
            }
            #expect(try await server.introspect(client, accessToken)["active"] as? Bool == true)
        }
    }

    @Test("a refresh token is active to its client only")
    func refreshTokenIsActiveToItsClient() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let other = try await server.offlineClient(name: "Other")
            let alice = try await server.enrolledUser("alice")
            let tokens = try await server.approvedTokens(client, user: alice)
            let refreshToken = try tokens.string("refresh_token")

            let answer = try await server.introspect(client, refreshToken)
            #expect(answer["active"] as? Bool == true)
            #expect(answer["client_id"] as? String == client.id)
            #expect(answer["sub"] as? String == alice.userID)
            #expect(answer["scope"] as? String == "openid offline_access")
            #expect(answer["iss"] as? String == server.base)
            #expect(answer["token_type"] == nil)
            let issuedAt = try #require(answer["iat"] as? Int)
            #expect(answer["exp"] as? Int == issuedAt + 14 * 86_400)

            #expect(String(decoding: try await server.introspect(other, refreshToken).data, as: UTF8.self) == #"{"active":false}"#)
            _ = try await server.refresh(client, refreshToken)
            #expect(try await server.introspect(client, refreshToken)["active"] as? Bool == false, "used")
        }
    }

    @Test("introspection needs client authentication and a token")
    func introspectionRequestErrors() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            #expect(try await server.rawForm("/introspect", [("token", "x")]).status == 401)
            let missing = try await server.form("/introspect", [], basic: client)
            #expect(missing.status == 400)
            #expect(missing.error == "invalid_request")
        }
    }
}
