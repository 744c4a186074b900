import CountersignCore
import Foundation
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `GET` and `POST /userinfo` (OpenID Connect Core §5.3, RFC 6750).
@Suite("UserInfo")
struct TokenUserInfoTests {
    /// A user with a display name and one enrolled device.
    static func namedUser(_ server: TestServer) async throws -> EnrolledUser {
        let created = try await server.admin(
            "POST", "/admin/v1/tenants/default/users", json: ["username": "alice", "display_name": "Alice Liddell"])
        #expect(created.status == 201)
        return try await server.enrollDevice(for: try created.string("id"), username: "alice", name: "phone")
    }

    @Test("with profile, UserInfo answers sub, preferred_username and name")
    func profileClaims() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await Self.namedUser(server)
            let tokens = try await server.approvedTokens(client, user: alice, scope: "openid profile")
            for method in ["GET", "POST"] {
                let answer = try await server.userInfo(try tokens.string("access_token"), method: method)
                #expect(answer.status == 200, "\(method)")
                #expect(answer.header("Content-Type") == "application/json")
                #expect(answer.header("Cache-Control") == "no-store")
                #expect(answer.json?.count == 3)
                #expect(answer["sub"] as? String == alice.userID)
                #expect(answer["preferred_username"] as? String == "alice")
                #expect(answer["name"] as? String == "Alice Liddell")
            }
        }
    }

    @Test("without profile, UserInfo answers sub alone")
    func subjectOnly() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await Self.namedUser(server)
            let tokens = try await server.approvedTokens(client, user: alice, scope: "openid")
            let answer = try await server.userInfo(try tokens.string("access_token"))
            #expect(answer.status == 200)
            #expect(String(decoding: answer.data, as: UTF8.self) == "{\"sub\":\"\(alice.userID)\"}")
        }
    }

    @Test("a POST may carry the access token in the form body instead")
    func formBodyToken() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await Self.namedUser(server)
            let tokens = try await server.approvedTokens(client, user: alice, scope: "openid")
            let answer = try await server.form("/userinfo", [("access_token", try tokens.string("access_token"))])
            #expect(answer.status == 200)
            #expect(answer["sub"] as? String == alice.userID)
        }
    }

    @Test("no access token is 401 with a bare Bearer challenge")
    func missingToken() async throws {
        try await TestServer.routed { server in
            for method in ["GET", "POST"] {
                let answer = try await server.userInfo(nil, method: method)
                #expect(answer.status == 401, "\(method)")
                #expect(answer.header("WWW-Authenticate") == "Bearer realm=\"\(server.base)\"", "\(method)")
                #expect(answer.error == nil, "\(method)")
            }
        }
    }

    @Test("a bad, expired or non-access token is 401 invalid_token")
    func invalidTokens() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await Self.namedUser(server)
            let expired = try await server.approvedTokens(client, user: alice, scope: "openid")
            server.clock.advance(by: 601)
            let current = try await server.approvedTokens(client, user: alice, scope: "openid")
            let cases: [(String, String)] = [
                ("garbage", "garbage"),
                ("expired", try expired.string("access_token")),
                ("an ID token", try current.string("id_token")),
                ("a refresh token", current["refresh_token"] as? String ?? "csr_none"),
            ]
            for (name, token) in cases {
                let answer = try await server.userInfo(token)
                #expect(answer.status == 401, "\(name)")
                #expect(answer.error == "invalid_token", "\(name)")
                let challenge = try #require(answer.header("WWW-Authenticate"), "\(name)")
                #expect(challenge.hasPrefix("Bearer realm=\"\(server.base)\", error=\"invalid_token\""), "\(name): \(challenge)")
            }
        }
    }

    @Test("a token for a disabled user is invalid_token")
    func disabledUser() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await Self.namedUser(server)
            let tokens = try await server.approvedTokens(client, user: alice, scope: "openid")
            #expect(try await server.admin(
                "PATCH", "/admin/v1/tenants/default/users/\(alice.userID)", json: ["status": "disabled"]).status == 200)
            let answer = try await server.userInfo(try tokens.string("access_token"))
            #expect(answer.status == 401)
            #expect(answer.error == "invalid_token")
        }
    }

    @Test("a token whose scope lacks openid is 403 insufficient_scope")
    func insufficientScope() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient(extraScopes: ["payments"])
            let alice = try await Self.namedUser(server)
            let tokens = try await server.approvedTokens(client, user: alice, scope: "openid offline_access payments")
            let narrowed = try await server.refresh(client, try tokens.string("refresh_token"), scope: "payments")
            let answer = try await server.userInfo(try narrowed.string("access_token"))
            #expect(answer.status == 403)
            #expect(answer.error == "insufficient_scope")
            #expect(answer.header("WWW-Authenticate")?.contains("scope=\"openid\"") == true)
        }
    }
}
