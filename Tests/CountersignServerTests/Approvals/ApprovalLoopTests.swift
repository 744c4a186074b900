import CountersignCore
import CountersignKit
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// The whole loop over HTTP: a relying party asks with CIBA, the device opens what was sealed
/// to it and signs its decision, the relying party polls for tokens.
@Suite("Approval loop, end to end")
struct ApprovalLoopTests {
    @Test("an approved request gives tokens that verify against /jwks", arguments: Engine.available)
    func approvalGivesVerifiableTokens(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient(name: "Online banking")
            let alice = try await server.enrolledUser("alice")
            let authReqID = try await server.startApproval(client, user: "alice", bindingMessage: "Pay 42.00 EUR to ACME")

            let envelope = try #require(try await alice.device.inbox().first)
            let (details, plaintext) = try alice.device.open(envelope)
            #expect(details.bindingMessage == "Pay 42.00 EUR to ACME")
            #expect(details.client.name == "Online banking")
            #expect(details.client.id == client.id)
            #expect(details.user == .init(id: alice.userID, name: "alice"))
            #expect(details.scope == ["openid"])
            #expect(details.context.ipAddress != nil)
            #expect(details.expiresAt > details.requestedAt)

            let pending = try await server.token(client, authReqID)
            #expect(pending.status == 400)
            #expect(pending.error == "authorization_pending")

            let answer = try await alice.device.answer(
                envelope.id, response: try alice.device.response(for: details, plaintext: plaintext))
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
            #expect(answer["status"] as? String == "approved")

            server.clock.advance(by: 6)
            let tokens = try await server.token(client, authReqID)
            #expect(tokens.status == 200, "\(tokens.error ?? "") \(tokens.errorDescription ?? "")")
            #expect(tokens.header("Cache-Control") == "no-store")
            #expect(tokens["token_type"] as? String == "Bearer")
            #expect((tokens["expires_in"] as? Int ?? 0) > 0)

            let keys = try await server.jwks()
            let access = try server.verifiedClaims(try #require(tokens["access_token"] as? String), keys: keys)
            #expect(access.type == "at+jwt")
            #expect(access.claims["iss"] as? String == server.base)
            #expect(access.claims["sub"] as? String == alice.userID)
            #expect(access.claims["client_id"] as? String == client.id)
            #expect(access.claims["scope"] as? String == "openid")
            for claim in ["aud", "exp", "iat", "jti"] { #expect(access.claims[claim] != nil, "access token lacks \(claim)") }

            let id = try server.verifiedClaims(try #require(tokens["id_token"] as? String), keys: keys)
            #expect(id.claims["iss"] as? String == server.base)
            #expect(id.claims["sub"] as? String == alice.userID)
            #expect(id.claims["aud"] as? String == client.id || (id.claims["aud"] as? [String]) == [client.id])
            for claim in ["exp", "iat", "auth_time", "acr", "amr"] { #expect(id.claims[claim] != nil, "ID token lacks \(claim)") }

            let again = try await server.token(client, authReqID)
            #expect(again.status == 400)
            #expect(again.error == "invalid_grant")
        }
    }

    @Test("a denied request gives the relying party access_denied", arguments: Engine.available)
    func denialGivesAccessDenied(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let bob = try await server.enrolledUser("bob")
            let authReqID = try await server.startApproval(client, user: "bob")
            let answer = try await bob.device.decideNewest(.deny)
            #expect(answer.status == 200)
            #expect(answer["status"] as? String == "denied")
            #expect(try await bob.device.inbox().isEmpty)

            let token = try await server.token(client, authReqID)
            #expect(token.status == 400)
            #expect(token.error == "access_denied")
        }
    }

    @Test("after expiry the inbox is empty, an answer is refused, and the client gets expired_token",
          arguments: Engine.available)
    func expiryEndsTheRequest(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let carol = try await server.enrolledUser("carol")
            let authReqID = try await server.startApproval(client, user: "carol", extra: [("requested_expiry", "60")])
            let envelope = try #require(try await carol.device.inbox().first)
            let (details, plaintext) = try carol.device.open(envelope)
            #expect(details.expiresAt - details.requestedAt == 60)

            server.clock.advance(by: 61)
            #expect(try await carol.device.inbox().isEmpty)
            let late = try await carol.device.answer(envelope.id, response: try carol.device.response(for: details, plaintext: plaintext))
            #expect(late.status == 410)
            #expect(late.error == "approval_expired")

            let token = try await server.token(client, authReqID)
            #expect(token.status == 400)
            #expect(token.error == "expired_token")
        }
    }

    @Test("polling faster than the interval gets slow_down, and the interval grows", arguments: Engine.available)
    func pollingTooFastGetsSlowDown(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            _ = try await server.enrolledUser("dave")
            let authReqID = try await server.startApproval(client, user: "dave")

            #expect(try await server.token(client, authReqID).error == "authorization_pending")
            server.clock.advance(by: 2)
            #expect(try await server.token(client, authReqID).error == "slow_down")
            // The interval is now 10 s: 6 s later is still too soon.
            server.clock.advance(by: 6)
            #expect(try await server.token(client, authReqID).error == "slow_down")
            server.clock.advance(by: 16)
            #expect(try await server.token(client, authReqID).error == "authorization_pending")
        }
    }

    @Test("the first answer wins; a second from the same or another device gets already_decided",
          arguments: Engine.available)
    func secondAnswerConflicts(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let erin = try await server.enrolledUser("erin")
            let tablet = try await server.enrollDevice(for: erin.userID, username: "erin", name: "Erin's tablet")
            let authReqID = try await server.startApproval(client, user: "erin")

            // Both devices received the request, each sealed to its own key.
            let onPhone = try #require(try await erin.device.inbox().first)
            let onTablet = try #require(try await tablet.device.inbox().first)
            #expect(onPhone.id == onTablet.id)
            #expect(onPhone.details != onTablet.details)
            #expect(throws: (any Error).self) { try tablet.device.open(onPhone) }

            let (phoneDetails, phonePlaintext) = try erin.device.open(onPhone)
            let (tabletDetails, tabletPlaintext) = try tablet.device.open(onTablet)
            #expect(phonePlaintext == tabletPlaintext)

            let approval = try erin.device.response(for: phoneDetails, plaintext: phonePlaintext)
            #expect(try await erin.device.answer(onPhone.id, response: approval).status == 200)

            let replay = try await erin.device.answer(onPhone.id, response: approval)
            #expect(replay.status == 409)
            #expect(replay.error == "already_decided")

            let late = try await tablet.device.answer(
                onTablet.id, response: try tablet.device.response(for: tabletDetails, plaintext: tabletPlaintext, decision: .deny))
            #expect(late.status == 409)
            #expect(late.error == "already_decided")
            #expect(try await tablet.device.inbox().isEmpty)

            server.clock.advance(by: 6)
            #expect(try await server.token(client, authReqID).status == 200)
        }
    }

    @Test("an answer over other details, with another challenge, or signed by another key changes nothing",
          arguments: Engine.available)
    func forgedAnswersAreRefused(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let frank = try await server.enrolledUser("frank")
            let mallory = try await server.enrolledUser("mallory")
            let authReqID = try await server.startApproval(client, user: "frank")
            let envelope = try #require(try await frank.device.inbox().first)
            let (details, plaintext) = try frank.device.open(envelope)
            let device = frank.device

            var shown = details
            shown.bindingMessage = "Pay 9,999.00 EUR to MALLORY"
            let otherDigest = TransactionDetails.digest(of: try shown.canonicalData())
            let refusals: [(String, Int, String)] = [
                (try device.response(for: details, plaintext: plaintext, digest: otherDigest), 400, "details_mismatch"),
                (try device.response(for: details, plaintext: plaintext, challenge: Data(repeating: 7, count: 32).base64URLEncodedString),
                 400, "challenge_mismatch"),
                (try device.response(for: details, plaintext: plaintext, signer: mallory.device.keys.signer), 400, "invalid_response"),
                (try device.response(for: details, plaintext: plaintext, kid: mallory.device.id), 400, "invalid_response"),
                ("not.a.jws", 400, "invalid_response"),
            ]
            for (response, status, code) in refusals {
                let answer = try await device.answer(envelope.id, response: response)
                #expect(answer.status == status)
                #expect(answer.error == code, "\(answer.errorDescription ?? "")")
            }
            // Another user's device cannot see, fetch or answer the request.
            #expect(try await mallory.device.inbox().isEmpty)
            #expect(try await mallory.device.call("GET", "/device/v1/requests/\(envelope.id)").error == "unknown_request")
            let hijack = try await mallory.device.answer(
                envelope.id, response: try mallory.device.response(for: details, plaintext: plaintext))
            #expect(hijack.status == 404)
            #expect(hijack.error == "unknown_request")

            // Nothing changed: the request is still pending and the genuine answer is accepted.
            #expect(try await server.token(client, authReqID).error == "authorization_pending")
            #expect(try await device.answer(envelope.id, response: try device.response(for: details, plaintext: plaintext)).status == 200)
        }
    }

    @Test("a device fetches one request by the id a push carries", arguments: Engine.available)
    func requestByID(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let gina = try await server.enrolledUser("gina")
            _ = try await server.startApproval(client, user: "gina")
            let listed = try #require(try await gina.device.inbox().first)
            let fetched = try await gina.device.call("GET", "/device/v1/requests/\(listed.id)")
            #expect(fetched.status == 200)
            #expect(try Timestamps.decoder().decode(PendingRequestEnvelope.self, from: fetched.data) == listed)
            let unknown = try await gina.device.call("GET", "/device/v1/requests/txn_nonexistent")
            #expect(unknown.status == 404)
            #expect(unknown.error == "unknown_request")
        }
    }

    @Test("the inbox lists the newest request first", arguments: Engine.available)
    func inboxIsNewestFirst(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let hank = try await server.enrolledUser("hank")
            for index in 1...3 {
                _ = try await server.startApproval(client, user: "hank", bindingMessage: "Request \(index)")
                server.clock.advance(by: 1)
            }
            let messages = try await hank.device.inbox().map { try hank.device.open($0).details.bindingMessage }
            #expect(messages == ["Request 3", "Request 2", "Request 1"])
        }
    }

    @Test("the relying party can fetch the signed receipt and check it itself", arguments: Engine.available)
    func receiptProvesWhatWasShown(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let ivy = try await server.enrolledUser("ivy")
            let authReqID = try await server.startApproval(client, user: "ivy", bindingMessage: "Transfer 10 EUR")
            #expect(try await ivy.device.decideNewest(.approve).status == 200)

            let receipt = try await server.form("/bc-authorize/receipt", [("auth_req_id", authReqID)], basic: client)
            #expect(receipt.status == 200, "\(receipt.error ?? "") \(receipt.errorDescription ?? "")")
            let detailsText = try #require(receipt["details"] as? String)
            let details = try TransactionDetails(canonicalBytes: Data(detailsText.utf8))
            #expect(details.bindingMessage == "Transfer 10 EUR")
            let keyObject = try #require(receipt["device_key"] as? [String: any Sendable])
            let key = try JSONDecoder().decode(ECPublicJWK.self, from: JSONSerialization.data(withJSONObject: keyObject))
            let (response, _) = try ApprovalResponse.verified(
                try #require(receipt["response"] as? String), key: try key.signingKey(), deviceID: ivy.device.id)
            #expect(response.decision == .approve)
            #expect(response.detailsDigest == TransactionDetails.digest(of: Data(detailsText.utf8)))
            #expect(response.challenge == details.challenge)

            let stranger = try await server.createClient(name: "Someone else")
            let refused = try await server.form("/bc-authorize/receipt", [("auth_req_id", authReqID)], basic: stranger)
            #expect(refused.error == "invalid_grant")
        }
    }

    @Test("expired requests are removed by the periodic sweep", arguments: Engine.available)
    func expiredRequestsAreSwept(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            _ = try await server.enrolledUser("jack")
            let stale = try await server.startApproval(client, user: "jack", extra: [("requested_expiry", "30")])
            server.clock.advance(by: ApprovalService.expiredRetention + 120)
            // The next request sweeps, and only what expired long enough ago goes.
            let fresh = try await server.startApproval(client, user: "jack")
            let approvals = SQLApprovalTransactionRepository()
            let database = server.database
            #expect(try await approvals.find(authReqIDHash: ApprovalService.hash(authReqID: stale), on: database) == nil)
            #expect(try await approvals.find(authReqIDHash: ApprovalService.hash(authReqID: fresh), on: database) != nil)
            #expect(try await server.token(client, stale).error == "invalid_grant")
        }
    }
}

extension TestServer {
    /// The published ES256 token-signing keys, by `kid` (`rsaJWKS()` has the RS256 ones).
    func jwks() async throws -> [String: P256.Signing.PublicKey] {
        let answer = try await call("GET", "/jwks")
        #expect(answer.status == 200)
        let keys = try #require(answer["keys"] as? [[String: any Sendable]])
        var byID: [String: P256.Signing.PublicKey] = [:]
        for key in keys where key["kty"] as? String == "EC" {
            let jwk = try JSONDecoder().decode(ECPublicJWK.self, from: JSONSerialization.data(withJSONObject: key))
            byID[try #require(key["kid"] as? String)] = try jwk.signingKey()
        }
        return byID
    }

    /// The claims of a JWT whose ES256 signature verifies with the key its `kid` names.
    func verifiedClaims(_ token: String, keys: [String: P256.Signing.PublicKey]) throws -> (type: String?, claims: [String: any Sendable]) {
        let jws = try CompactJWS(parsing: token)
        let kid = try #require(jws.keyID)
        let key = try #require(keys[kid], "no published key has kid \(kid)")
        try jws.verify(with: key)
        let claims = try #require(try JSONSerialization.jsonObject(with: jws.payload) as? [String: any Sendable])
        return (jws.type, claims)
    }
}
