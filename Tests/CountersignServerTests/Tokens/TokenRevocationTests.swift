import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// `POST /revoke` (RFC 7009).
@Suite("Token revocation")
struct TokenRevocationTests {
    @Test("revoking a refresh token ends its family and the access tokens issued with it")
    func revokingRefreshTokenEndsFamily() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let first = try await server.approvedTokens(client, user: alice)
            let second = try await server.refresh(client, try first.string("refresh_token"))
            let refreshToken = try second.string("refresh_token")
            #expect(try await server.introspect(client, refreshToken)["active"] as? Bool == true)

            let answer = try await server.revoke(client, refreshToken, hint: "refresh_token")
            #expect(answer.status == 200)
            #expect(answer.header("Cache-Control") == "no-store")
            #expect(try await server.introspect(client, refreshToken)["active"] as? Bool == false)
            #expect(try await server.introspect(client, try second.string("access_token"))["active"] as? Bool == false)
            let refreshed = try await server.refresh(client, refreshToken)
            #expect(refreshed.error == "invalid_grant")
            #expect(refreshed.errorDescription == "refresh_token was revoked")
            #expect(try await server.auditActions().contains("refresh_token.revoked"))
        }
    }

    @Test("a revoked access token is inactive at introspection and refused at UserInfo")
    func revokingAccessToken() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let tokens = try await server.approvedTokens(client, user: alice, scope: "openid")
            let accessToken = try tokens.string("access_token")
            #expect(try await server.introspect(client, accessToken)["active"] as? Bool == true)

            #expect(try await server.revoke(client, accessToken).status == 200)
            #expect(try await server.introspect(client, accessToken)["active"] as? Bool == false)
            #expect(try await server.userInfo(accessToken).status == 401)
            #expect(try await server.revoke(client, accessToken, hint: "access_token").status == 200, "revoking again")
            #expect(try await server.auditActions().filter { $0 == "access_token.revoked" }.count == 1)
        }
    }

    @Test("unknown tokens, other clients' tokens and unknown hints are answered 200 and change nothing")
    func invalidTokensAreAnswered200() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let other = try await server.offlineClient(name: "Other")
            let alice = try await server.enrolledUser("alice")
            let tokens = try await server.approvedTokens(client, user: alice)
            let cases: [(String, String, String?)] = [
                ("garbage", "not a token", nil),
                ("unknown refresh token", "csr_unknown", "refresh_token"),
                ("another client's refresh token", try tokens.string("refresh_token"), nil),
                ("another client's access token", try tokens.string("access_token"), "access_token"),
                ("an ID token", try tokens.string("id_token"), nil),
                ("an unknown hint", try tokens.string("refresh_token"), "device_secret"),
            ]
            for (name, token, hint) in cases {
                let answer = try await server.revoke(other, token, hint: hint)
                #expect(answer.status == 200, "\(name): \(answer.errorDescription ?? "")")
            }
            #expect(try await server.introspect(client, try tokens.string("refresh_token"))["active"] as? Bool == true)
            #expect(try await server.introspect(client, try tokens.string("access_token"))["active"] as? Bool == true)
        }
    }

    @Test("revocation needs client authentication and a token")
    func revocationRequestErrors() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let anonymous = try await server.rawForm("/revoke", [("token", "csr_x")])
            #expect(anonymous.status == 401)
            #expect(anonymous.error == "invalid_client")
            let missing = try await server.form("/revoke", [("token_type_hint", "refresh_token")], basic: client)
            #expect(missing.status == 400)
            #expect(missing.error == "invalid_request")
            #expect(missing.errorDescription == "token is required")
        }
    }

    @Test("another tenant's endpoint is at /t/<slug>/revoke")
    func tenantRevocationEndpoint() async throws {
        try await TestServer.routed { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            let client = try await server.createClient(scopes: ["openid", "offline_access"], tenant: "acme")
            let answer = try await server.form("/t/acme/revoke", [("token", "csr_unknown")], basic: client)
            #expect(answer.status == 200)
            #expect(try await server.form("/t/nowhere/revoke", [("token", "x")], basic: client).status == 404)
        }
    }
}
