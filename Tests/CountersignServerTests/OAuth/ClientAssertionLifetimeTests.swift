import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// How long a `private_key_jwt` client assertion may be valid is the tenant's to say
/// (`client_assertion_max_lifetime_seconds`): 300 seconds unless it allows more, up to a day,
/// so that a relying party minting hour-long assertions (Authlib's default) can be let in.
@Suite("Client assertion lifetime")
struct ClientAssertionLifetimeTests {
    static let poll = [("grant_type", CIBAEndpointTests.grantType), ("auth_req_id", "unknown")]

    /// A poll with an assertion of `client` valid for `lifetime` seconds from now.
    static func poll(_ server: TestServer, _ client: KeyClient, lifetime: TimeInterval) async throws -> TestServer.Answer {
        var claims = server.assertionClaims(client.id)
        claims["exp"] = server.epoch(lifetime)
        return try await server.rawForm("/token", poll + TestServer.assertionParameters(try client.key.jwt(claims)))
    }

    static func setLifetime(_ server: TestServer, _ value: any Sendable) async throws -> TestServer.Answer {
        var policy = try #require(try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy").json)
        policy["client_assertion_max_lifetime_seconds"] = value
        return try await server.admin("PUT", "/admin/v1/tenants/default/authentication-policy", json: policy)
    }

    @Test("by default an assertion valid for an hour is refused, one of 300 seconds accepted")
    func defaultIsFiveMinutes() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient()
            let policy = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            #expect(policy["client_assertion_max_lifetime_seconds"] as? Int == 300)
            let hour = try await Self.poll(server, client, lifetime: 3600)
            #expect(hour.status == 401)
            #expect(hour.error == "invalid_client")
            #expect(hour.errorDescription == "client_assertion may be valid for at most 300 seconds (exp - iat)")
            let fiveMinutes = try await Self.poll(server, client, lifetime: 300)
            #expect(fiveMinutes.error == "invalid_grant", "authenticated: \(fiveMinutes.errorDescription ?? "")")
        }
    }

    @Test("a tenant that allows 3600 seconds accepts an hour-long assertion, and refuses a longer one")
    func tenantAllowsAnHour() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient()
            let set = try await Self.setLifetime(server, 3600)
            #expect(set.status == 200, "\(set.errorDescription ?? "")")
            #expect(set["client_assertion_max_lifetime_seconds"] as? Int == 3600)
            let hour = try await Self.poll(server, client, lifetime: 3600)
            #expect(hour.error == "invalid_grant", "authenticated: \(hour.errorDescription ?? "")")
            let longer = try await Self.poll(server, client, lifetime: 3601)
            #expect(longer.status == 401)
            #expect(longer.errorDescription == "client_assertion may be valid for at most 3600 seconds (exp - iat)")
        }
    }

    @Test("a maximum lifetime outside 60 to 86400 seconds, or not a whole number, is a field error that changes nothing",
          arguments: [0, 59, 86401, -1, 3.5, "3600"] as [any Sendable & CustomStringConvertible])
    func outOfRangeLifetimeIsRefused(value: any Sendable & CustomStringConvertible) async throws {
        try await TestServer.routed { server in
            let answer = try await Self.setLifetime(server, value)
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.errorDescription?.hasPrefix("field client_assertion_max_lifetime_seconds ") == true,
                    "\(answer.errorDescription ?? "")")
            let policy = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            #expect(policy["client_assertion_max_lifetime_seconds"] as? Int == 300)
        }
    }

    @Test("the range's message names the bounds")
    func rangeMessage() async throws {
        try await TestServer.routed { server in
            let answer = try await Self.setLifetime(server, 86401)
            #expect(answer.errorDescription == "field client_assertion_max_lifetime_seconds is invalid: must be 60 to 86400 (a day)")
        }
    }
}
