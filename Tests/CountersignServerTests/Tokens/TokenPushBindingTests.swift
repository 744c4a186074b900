import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// CIBA §10.3.1: the ID token of a push delivery binds the request and the tokens beside it.
@Suite("Push-mode ID token bindings")
struct TokenPushBindingTests {
    /// An approved, unexchanged request of `client` for `user`, with what `TokenIssuer.issue` takes.
    static func approved(_ server: TestServer, client: TestClient, user: EnrolledUser, scope: String) async throws
        -> (authReqID: String, transaction: ApprovalTransaction, client: Client, issuer: Issuer) {
        let started = try await server.bcAuthorize(client, [("scope", scope), ("login_hint", user.username)])
        let authReqID = try started.string("auth_req_id")
        _ = try await user.device.decideNewest(.approve)
        let transaction = try #require(try await SQLApprovalTransactionRepository().find(
            authReqIDHash: ApprovalService.hash(authReqID: authReqID), on: server.database))
        let tenant = try #require(try await server.tenants.resolve(slug: nil))
        let stored = try #require(try await SQLClientRepository().find(id: client.id, tenantID: tenant.id, on: server.database))
        return (authReqID, transaction, stored, Issuer(tenant: tenant, origin: server.server.origin))
    }

    static func leftHalfHash(_ token: String) -> String {
        Data(SHA256.hash(data: Data(token.utf8)).prefix(16)).base64URLEncodedString
    }

    @Test("with auth_req_id the ID token carries auth_req_id, at_hash and rt_hash")
    func bindingsRecompute() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let request = try await Self.approved(server, client: client, user: alice, scope: "openid offline_access")
            let tokens = try await TokenIssuer(keys: server.tokenSigningKeys, records: SQLIssuedTokenStore(database: server.database)).issue(
                for: request.transaction, client: request.client, issuer: request.issuer, at: server.clock.now,
                authReqID: request.authReqID)
            let refreshToken = try #require(tokens.refreshToken)
            let claims = try server.verifiedClaims(try #require(tokens.idToken), keys: try await server.jwks()).claims
            #expect(claims["urn:openid:params:jwt:claim:auth_req_id"] as? String == request.authReqID)
            #expect(claims["at_hash"] as? String == Self.leftHalfHash(tokens.accessToken))
            #expect(claims["urn:openid:params:jwt:claim:rt_hash"] as? String == Self.leftHalfHash(refreshToken))

            let refreshed = try await server.refresh(client, refreshToken)
            #expect(refreshed.status == 200, "the issued refresh token was stored: \(refreshed.errorDescription ?? "")")
        }
    }

    @Test("without offline_access there is no rt_hash; without auth_req_id no binding at all")
    func bindingsOnlyWhereTheyApply() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let issuer = TokenIssuer(keys: server.tokenSigningKeys, records: SQLIssuedTokenStore(database: server.database))
            let keys = try await server.jwks()

            let pushed = try await Self.approved(server, client: client, user: alice, scope: "openid")
            let withoutRefresh = try await issuer.issue(
                for: pushed.transaction, client: pushed.client, issuer: pushed.issuer, at: server.clock.now,
                authReqID: pushed.authReqID)
            let pushedClaims = try server.verifiedClaims(try #require(withoutRefresh.idToken), keys: keys).claims
            #expect(pushedClaims["at_hash"] as? String == Self.leftHalfHash(withoutRefresh.accessToken))
            #expect(pushedClaims["urn:openid:params:jwt:claim:rt_hash"] == nil)

            let polled = try await Self.approved(server, client: client, user: alice, scope: "openid offline_access")
            let plain = try await issuer.issue(for: polled.transaction, client: polled.client, issuer: polled.issuer,
                                               at: server.clock.now)
            let plainClaims = try server.verifiedClaims(try #require(plain.idToken), keys: keys).claims
            for claim in ["urn:openid:params:jwt:claim:auth_req_id", "at_hash", "urn:openid:params:jwt:claim:rt_hash"] {
                #expect(plainClaims[claim] == nil, "\(claim)")
            }
        }
    }
}
