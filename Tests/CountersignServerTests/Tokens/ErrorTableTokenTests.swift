import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The token endpoint's errors from `docs/ciba.md` that no other table covers, with the CIBA
/// grant (CIBA §11) and the refresh grant (RFC 6749 §5.2, §6): all 400, `access_denied` and
/// `slow_down` included, never with a challenge or `Retry-After`.
@Suite("Error table: token endpoint")
struct ErrorTableTokenTests {
    static let grantType = "urn:openid:params:grant-type:ciba"

    /// A poll client that may hold refresh tokens, and `alice` with one device.
    struct Fixture: Sendable {
        let server: TestServer
        let client: TestClient
        let alice: EnrolledUser

        func poll(_ authReqID: String, as client: TestClient? = nil) async throws -> TestServer.Answer {
            try await server.rawForm(
                "/token", [("grant_type", ErrorTableTokenTests.grantType), ("auth_req_id", authReqID)], basic: client ?? self.client)
        }

        func refresh(_ token: String, scope: String? = nil, as client: TestClient? = nil) async throws -> TestServer.Answer {
            try await server.rawForm(
                "/token", [("grant_type", "refresh_token"), ("refresh_token", token)] + (scope.map { [("scope", $0)] } ?? []),
                basic: client ?? self.client)
        }

        func started(expiry: Int = 300, for user: String = "alice") async throws -> String {
            try await server.startApproval(client, user: user, extra: [("requested_expiry", String(expiry))])
        }

        /// A refresh token of `user` for `client` (the fixture's unless given), of `scope`.
        func refreshToken(_ client: TestClient? = nil, user: EnrolledUser? = nil, scope: String = "openid offline_access")
            async throws -> String {
            try await server.approvedTokens(client ?? self.client, user: user ?? alice, scope: scope).string("refresh_token")
        }
    }

    typealias Row = ErrorRow<Fixture>

    static let rows: [Row] = [
        Row(name: "the CIBA grant from a push client", status: 400, error: "unauthorized_client",
            description: "the client is registered for push mode and receives its tokens there") { fixture in
            try await fixture.poll("anything", as: try await fixture.server.createClient(name: "Pushed", mode: "push"))
        },
        Row(name: "undecided", status: 400, error: "authorization_pending", description: "the user has not decided yet") { fixture in
            try await fixture.poll(try await fixture.started())
        },
        Row(name: "undecided, polled again within the interval", status: 400, error: "slow_down",
            description: "poll at most every 10 seconds") { fixture in
            let authReqID = try await fixture.started()
            #expect(try await fixture.poll(authReqID).error == "authorization_pending")
            return try await fixture.poll(authReqID)
        },
        Row(name: "undecided and expired", status: 400, error: "expired_token", description: "auth_req_id has expired") { fixture in
            let authReqID = try await fixture.started(expiry: 1)
            fixture.server.clock.advance(by: 1)
            return try await fixture.poll(authReqID)
        },
        Row(name: "denied", status: 400, error: "access_denied", description: "the user denied the request") { fixture in
            let authReqID = try await fixture.started()
            try await fixture.server.decide(authReqID, .denied, by: fixture.alice)
            return try await fixture.poll(authReqID)
        },
        Row(name: "approved and already exchanged", status: 400, error: "invalid_grant",
            description: "auth_req_id was already exchanged for tokens") { fixture in
            let authReqID = try await fixture.started()
            try await fixture.server.decide(authReqID, .approved, by: fixture.alice)
            #expect(try await fixture.poll(authReqID).status == 200)
            return try await fixture.poll(authReqID)
        },
        Row(name: "approved, its expiry plus the interval passed", status: 400, error: "expired_token",
            description: "auth_req_id has expired") { fixture in
            let authReqID = try await fixture.started(expiry: 1)
            try await fixture.server.decide(authReqID, .approved, by: fixture.alice)
            fixture.server.clock.advance(by: 6)
            return try await fixture.poll(authReqID)
        },
        Row(name: "approved, the user disabled since", status: 400, error: "invalid_grant",
            description: "the user was disabled or removed after approving") { fixture in
            let carol = try await fixture.server.enrolledUser("carol")
            let authReqID = try await fixture.started(for: "carol")
            try await fixture.server.decide(authReqID, .approved, by: carol)
            #expect(try await fixture.server.admin(
                "PATCH", "/admin/v1/tenants/default/users/\(carol.userID)", json: ["status": "disabled"]).status == 200)
            return try await fixture.poll(authReqID)
        },
        Row(name: "refresh: revoked", status: 400, error: "invalid_grant", description: "refresh_token was revoked") { fixture in
            let token = try await fixture.refreshToken()
            #expect(try await fixture.server.revoke(fixture.client, token).status == 200)
            return try await fixture.refresh(token)
        },
        Row(name: "refresh: used already", status: 400, error: "invalid_grant",
            description: "refresh_token was already used; every refresh token of its grant is now revoked") { fixture in
            let token = try await fixture.refreshToken()
            #expect(try await fixture.refresh(token).status == 200)
            return try await fixture.refresh(token)
        },
        Row(name: "refresh: offline_access withdrawn from the client", status: 400, error: "invalid_grant",
            description: "the client is no longer allowed offline_access") { fixture in
            let withdrawn = try await fixture.server.offlineClient(name: "Withdrawn")
            let token = try await fixture.refreshToken(withdrawn)
            #expect(try await fixture.server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(withdrawn.id)", json: ["scopes": ["openid"]]).status == 200)
            return try await fixture.refresh(token, as: withdrawn)
        },
        Row(name: "refresh: scope not made of scope tokens", status: 400, error: "invalid_scope",
            description: "scope must be space-separated scope tokens") { fixture in
            try await fixture.refresh(try await fixture.refreshToken(), scope: "open\\id")
        },
        Row(name: "refresh: scope the approval did not grant", status: 400, error: "invalid_scope",
            description: "scope profile was not granted with this refresh token") { fixture in
            try await fixture.refresh(try await fixture.refreshToken(), scope: "openid profile")
        },
        Row(name: "refresh: scope since withdrawn from the client", status: 400, error: "invalid_scope",
            description: "the client may not request scope profile") { fixture in
            let narrowed = try await fixture.server.offlineClient(name: "Narrowed")
            let token = try await fixture.refreshToken(narrowed, scope: "openid offline_access profile")
            #expect(try await fixture.server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(narrowed.id)", json: ["scopes": ["openid", "offline_access"]]).status == 200)
            return try await fixture.refresh(token, scope: "profile", as: narrowed)
        },
        Row(name: "refresh: the user disabled since", status: 400, error: "invalid_grant",
            description: "the user was disabled or removed after approving") { fixture in
            let dave = try await fixture.server.enrolledUser("dave")
            let token = try await fixture.refreshToken(user: dave)
            #expect(try await fixture.server.admin(
                "PATCH", "/admin/v1/tenants/default/users/\(dave.userID)", json: ["status": "disabled"]).status == 200)
            return try await fixture.refresh(token)
        },
        // Moves the clock by two weeks, so it comes last.
        Row(name: "refresh: unused for 14 days", status: 400, error: "invalid_grant", description: "refresh_token has expired") {
            fixture in
            let token = try await fixture.refreshToken()
            fixture.server.clock.advance(by: 14 * 86_400 + 1)
            return try await fixture.refresh(token)
        },
    ]

    @Test("every row of the token endpoint's error tables no other table covers gets its exact answer")
    func tokenRows() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["user_requests_per_minute": 0])
            let fixture = Fixture(server: server, client: try await server.offlineClient(), alice: try await server.enrolledUser("alice"))
            for row in Self.rows {
                try row.check(try await row.send(fixture), realm: server.base)
            }
        }
    }
}
