import CountersignCore
import Foundation
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Tokens from a real approval, and the calls of the token endpoints that use them.
extension TestServer {
    /// A client of the default tenant allowed refresh tokens and profile claims.
    func offlineClient(name: String = "Online banking", extraScopes: [String] = []) async throws -> TestClient {
        try await createClient(name: name, scopes: ["openid", "offline_access", "profile"] + extraScopes)
    }

    /// Starts a request for `user` with `scope`, records the device's approval, and exchanges it.
    func approvedTokens(_ client: TestClient, user: EnrolledUser, scope: String = "openid offline_access",
                        tenantPath: String = "") async throws -> Answer {
        let started = try await form(tenantPath + "/bc-authorize", [("scope", scope), ("login_hint", user.username)], basic: client)
        #expect(started.status == 200, "bc-authorize: \(started.error ?? "") \(started.errorDescription ?? "")")
        let authReqID = try #require(started["auth_req_id"] as? String)
        // Recorded as the device would: the device's side is the approval loop's to test.
        try await decide(authReqID, .approved, by: user)
        let tokens = try await form(
            tenantPath + "/token", [("grant_type", "urn:openid:params:grant-type:ciba"), ("auth_req_id", authReqID)], basic: client)
        #expect(tokens.status == 200, "token: \(tokens.error ?? "") \(tokens.errorDescription ?? "")")
        return tokens
    }

    func refresh(_ client: TestClient, _ refreshToken: String, scope: String? = nil) async throws -> Answer {
        var parameters = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        if let scope { parameters.append(("scope", scope)) }
        return try await form("/token", parameters, basic: client)
    }

    func revoke(_ client: TestClient, _ token: String, hint: String? = nil) async throws -> Answer {
        try await form("/revoke", [("token", token)] + (hint.map { [("token_type_hint", $0)] } ?? []), basic: client)
    }

    func introspect(_ client: TestClient, _ token: String, tenantPath: String = "") async throws -> Answer {
        try await form(tenantPath + "/introspect", [("token", token)], basic: client)
    }

    /// `/userinfo` with `Authorization: Bearer <token>`, or without any when `token` is nil.
    func userInfo(_ token: String?, method: String = "GET") async throws -> Answer {
        var request = URLRequest(url: try #require(URL(string: base + "/userinfo")), timeoutInterval: 10)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        return try await send(request)
    }

    /// The events of the audit log, newest first.
    func auditActions() async throws -> [String] {
        try await SQLAuditRepository().list(tenantID: nil, before: nil, limit: 200, on: database).map(\.action)
    }
}

extension TestServer.Answer {
    func string(_ key: String) throws -> String {
        try #require(self[key] as? String, "no \(key) in \(String(decoding: data, as: UTF8.self))")
    }
}
