import CountersignCore
import CountersignKit
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// Enrolling a phone with the user's own access token (scope `countersign:enroll`) from the
/// code flow, instead of an administrator's ticket: the app signs its user in, then calls
/// `CountersignAuthenticator.enroll(accessToken:server:…)`.
@Suite("Enrollment with the user's access token")
struct EnrollmentByAccessTokenTests {
    /// A native app's public client allowed `countersign:enroll`, and Alice with a first phone.
    private func signedIn(_ server: TestServer, scope: String = "openid countersign:enroll") async throws
        -> (client: CodeFlowClient, user: EnrolledUser, accessToken: String) {
        let client = try await server.createCodeFlowClient(
            redirectURI: "com.example.bank:/callback", scopes: ["openid", "countersign:enroll"], isPublic: true)
        let user = try await server.enrolledUser("alice")
        let verifier = CodeFlowClient.verifier()
        let back = try await server.signIn(
            PageVisitor(server), client: client, user: user, challenge: CodeFlowClient.challenge(verifier),
            scope: scope)
        let tokens = try await server.redeem(try #require(back.redirectParameters["code"]), client: client, verifier: verifier)
        #expect(tokens.status == 200, "\(tokens.errorDescription ?? "")")
        return (client, user, try #require(tokens["access_token"] as? String))
    }

    @Test("A second phone enrolls with the access token of a sign-in approved on the first, bound to that user", arguments: Engine.available)
    func enrollsTheTokensUser(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let (_, user, accessToken) = try await signedIn(server)
            let (kit, _) = server.authenticator()
            let enrollment = try await kit.enroll(
                accessToken: accessToken, server: try #require(URL(string: server.base)), deviceName: "Alice's new phone",
                platform: .android)
            #expect(enrollment.user.id == user.userID)
            #expect(enrollment.user.username == "alice")
            let devices = try await server.admin("GET", "/admin/v1/tenants/default/users/\(user.userID)/devices")
            #expect((devices["items"] as? [[String: any Sendable]])?.count == 2)

            // One device per token.
            let (again, _) = server.authenticator()
            await #expect(throws: CountersignError.enrollmentRejected(
                code: "invalid_request",
                description: "this access token has already enrolled a device; sign in again to enroll another")) {
                _ = try await again.enroll(accessToken: accessToken, server: try #require(URL(string: server.base)),
                                           deviceName: "Third", platform: .android)
            }
        }
    }

    @Test("A refreshed token whose sign-in is older than ten minutes is 401 insufficient_user_authentication with max_age, and enrolls nothing")
    func staleSignInEnrollsNothing() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient(
                redirectURI: "com.example.bank:/callback", scopes: ["openid", "offline_access", "countersign:enroll"], isPublic: true)
            let user = try await server.enrolledUser("alice")
            let verifier = CodeFlowClient.verifier()
            let back = try await server.signIn(
                PageVisitor(server), client: client, user: user, challenge: CodeFlowClient.challenge(verifier),
                scope: "openid offline_access countersign:enroll")
            let tokens = try await server.redeem(try #require(back.redirectParameters["code"]), client: client, verifier: verifier)
            let refreshToken = try #require(tokens["refresh_token"] as? String, "\(tokens.errorDescription ?? "")")
            server.clock.advance(by: AccountFlow.freshSignIn + 1)
            let refreshed = try await server.form(
                "/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", client.id)])
            let accessToken = try #require(refreshed["access_token"] as? String, "\(refreshed.errorDescription ?? "")")
            let (kit, _) = server.authenticator()
            await #expect(throws: CountersignError.enrollmentRejected(
                code: "insufficient_user_authentication",
                description: "the sign-in behind this access token is older than 600 seconds; sign in again to enroll a device")) {
                _ = try await kit.enroll(accessToken: accessToken, server: try #require(URL(string: server.base)),
                                         deviceName: "New phone", platform: .android)
            }
            let devices = try await server.admin("GET", "/admin/v1/tenants/default/users/\(user.userID)/devices")
            #expect((devices["items"] as? [[String: any Sendable]])?.count == 1)
        }
    }

    @Test("A token without countersign:enroll is 403 insufficient_scope, and enrolls nothing")
    func tokenWithoutTheScope() async throws {
        try await TestServer.routed { server in
            let (_, user, accessToken) = try await signedIn(server, scope: "openid")
            let (kit, _) = server.authenticator()
            await #expect(throws: CountersignError.enrollmentRejected(
                code: "insufficient_scope", description: "the access token must carry the scope countersign:enroll")) {
                _ = try await kit.enroll(accessToken: accessToken, server: try #require(URL(string: server.base)),
                                         deviceName: "New phone", platform: .android)
            }
            let devices = try await server.admin("GET", "/admin/v1/tenants/default/users/\(user.userID)/devices")
            #expect((devices["items"] as? [[String: any Sendable]])?.count == 1)
        }
    }

    @Test("Hand-made requests: an expired or foreign token is 401 invalid_token; a wrong ath, both credentials or none are refused")
    func refusedRequests() async throws {
        try await TestServer.routed { server in
            let (_, _, accessToken) = try await signedIn(server)
            let signer = P256.Signing.PrivateKey()
            func submit(ticket: String?, ath: String?, bearer: String?) async throws -> TestServer.Answer {
                let request = EnrollmentRequest(
                    ticket: ticket, audience: server.base, issuedAt: Int64(server.clock.now.timeIntervalSince1970),
                    deviceName: "Phone", platform: .android, signingKey: ECPublicJWK(signer.publicKey),
                    encryptionKey: ECPublicJWK(P256.KeyAgreement.PrivateKey().publicKey), push: nil, accessTokenHash: ath)
                let jws = try CompactJWS.sign(
                    header: ["typ": .string(EnrollmentRequest.type), "jwk": try JSONValue(encoding: ECPublicJWK(signer.publicKey))],
                    payload: try JSONValue(encoding: request).canonicalData, signer: signer)
                return try await server.call(
                    "POST", "/device/v1/enrollments", body: try JSONEncoder().encode(EnrollmentSubmission(enrollmentRequest: jws.serialized)),
                    headers: bearer.map { ["Authorization": "Bearer \($0)"] } ?? [:])
            }
            let ath = EnrollmentRequest.hash(accessToken: accessToken)
            let wrongHash = try await submit(ticket: nil, ath: EnrollmentRequest.hash(accessToken: "other"), bearer: accessToken)
            #expect(wrongHash.status == 400)
            #expect(wrongHash.error == "invalid_proof")
            let both = try await submit(ticket: "cst_x", ath: ath, bearer: accessToken)
            #expect(both.status == 400)
            #expect(both.error == "invalid_request")
            let neither = try await submit(ticket: nil, ath: nil, bearer: nil)
            #expect(neither.status == 400)
            #expect(neither.error == "invalid_request")
            let athWithoutToken = try await submit(ticket: "cst_x", ath: ath, bearer: nil)
            #expect(athWithoutToken.error == "invalid_request")
            let forged = accessToken.dropLast(4) + "AAAA"
            let bad = try await submit(ticket: nil, ath: EnrollmentRequest.hash(accessToken: String(forged)), bearer: String(forged))
            #expect(bad.status == 401)
            #expect(bad.error == "invalid_token")
            #expect(bad.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            server.clock.advance(by: TimeInterval(TokenIssuer.accessTokenLifetime + 1))
            let expired = try await submit(ticket: nil, ath: ath, bearer: accessToken)
            #expect(expired.status == 401)
            #expect(expired.error == "invalid_token")
            #expect(expired.errorDescription == "the access token has expired")
        }
    }
}
