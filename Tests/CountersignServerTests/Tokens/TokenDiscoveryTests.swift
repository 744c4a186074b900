import Foundation
import Testing
@testable import CountersignServer

/// The discovery members of the token endpoints.
@Suite("Token endpoints in discovery")
struct TokenDiscoveryTests {
    @Test("discovery names the revocation, introspection and UserInfo endpoints and their methods")
    func discoveryNamesTokenEndpoints() async throws {
        try await TestServer.routed { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            for issuer in [server.base, server.base + "/t/acme"] {
                let path = String(issuer.dropFirst(server.base.count)) + "/.well-known/openid-configuration"
                let answer = try await server.call("GET", path)
                #expect(answer["revocation_endpoint"] as? String == issuer + "/revoke")
                #expect(answer["introspection_endpoint"] as? String == issuer + "/introspect")
                #expect(answer["userinfo_endpoint"] as? String == issuer + "/userinfo")
                let methods = try #require(answer["token_endpoint_auth_methods_supported"] as? [String])
                #expect(answer["revocation_endpoint_auth_methods_supported"] as? [String] == methods)
                #expect(answer["introspection_endpoint_auth_methods_supported"] as? [String] == methods.filter { $0 != "none" })
                #expect((answer["grant_types_supported"] as? [String])?.contains("refresh_token") == true)
                #expect(Set(try #require(answer["scopes_supported"] as? [String])).isSuperset(of: ["openid", "offline_access", "profile"]))
            }
        }
    }
}
