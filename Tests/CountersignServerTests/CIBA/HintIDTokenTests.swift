import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// `id_token_hint` beyond the cases of `CIBAEndpointTests.idTokenHint`: tokens of another
/// tenant, unsecured tokens, users gone since, and the hint inside a signed request.
@Suite("id_token_hint")
struct HintIDTokenTests {
    /// An ID token the default tenant issued to `client` for alice.
    static func idToken(_ server: TestServer, client: TestClient, alice: EnrolledUser, path: String = "") async throws -> String {
        let started = try await server.form(path + "/bc-authorize", [("scope", "openid"), ("login_hint", alice.username)],
                                            basic: client)
        let authReqID = try #require(started["auth_req_id"] as? String, "\(started.errorDescription ?? "")")
        try await server.decide(authReqID, .approved, by: alice)
        let tokens = try await server.form(
            path + "/token", [("grant_type", CIBAEndpointTests.grantType), ("auth_req_id", authReqID)], basic: client)
        return try #require(tokens["id_token"] as? String, "\(tokens.errorDescription ?? "")")
    }

    @Test("an ID token of another tenant is invalid_request")
    func anotherTenantsIDToken() async throws {
        try await TestServer.routed { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            let foreignClient = try await server.createClient(tenant: "acme")
            let bob = try await server.enrolledUser("bob", tenant: "acme")
            let foreign = try await Self.idToken(server, client: foreignClient, alice: bob, path: "/t/acme")
            let client = try await server.createClient()
            let answer = try await server.bcAuthorize(client, [("scope", "openid"), ("id_token_hint", foreign)])
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.errorDescription == "id_token_hint is not signed by a key of this issuer")
        }
    }

    @Test("an unsecured ID token (alg none) is invalid_request")
    func unsecuredIDToken() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            let unsecured = ClientSigningKey.unsigned([
                "iss": .string(server.base), "aud": .string(client.id), "sub": .string(alice.userID), "exp": server.epoch(600),
            ])
            let answer = try await server.bcAuthorize(client, [("scope", "openid"), ("id_token_hint", unsecured)])
            #expect(answer.status == 400)
            #expect(answer.errorDescription == "id_token_hint is not an ES256 or RS256 JWS")
        }
    }

    @Test("an ID token of a user deleted since is unknown_user_id")
    func deletedUser() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            let token = try await Self.idToken(server, client: client, alice: alice)
            #expect(try await server.admin("DELETE", "/admin/v1/tenants/default/users/\(alice.userID)").status == 204)
            let answer = try await server.bcAuthorize(client, [("scope", "openid"), ("id_token_hint", token)])
            #expect(answer.status == 400)
            #expect(answer.error == "unknown_user_id")
        }
    }

    @Test("an id_token_hint works inside a signed request")
    func hintInSignedRequest() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient(method: "client_secret_basic")
            let basic = try client.basic
            let alice = try await server.enrolledUser("alice")
            let token = try await Self.idToken(server, client: basic, alice: alice)
            var claims = server.requestClaims(client.id)
            claims["login_hint"] = nil
            claims["id_token_hint"] = .string(token)
            let answer = try await server.rawForm("/bc-authorize", [("request", try client.key.jwt(claims))], basic: basic)
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        }
    }
}
