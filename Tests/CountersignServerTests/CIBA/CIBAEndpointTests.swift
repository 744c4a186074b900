import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The relying party's side of CIBA, poll mode, over HTTP: `bc-authorize`, `token` and the
/// receipt, with every error code and status they answer. Decisions are recorded at the
/// storage level here; the device's side of the loop is `ApprovalLoopTests`.
@Suite("CIBA endpoints")
struct CIBAEndpointTests {
    static let grantType = "urn:openid:params:grant-type:ciba"

    /// One bad `bc-authorize` request and the error it must get.
    struct BadRequest: Sendable, CustomTestStringConvertible {
        let name: String
        let parameters: [(String, String)]
        let error: String
        var status = 400
        var testDescription: String { name }
    }

    static let badRequests: [BadRequest] = [
        BadRequest(name: "no scope", parameters: [("login_hint", "alice")], error: "invalid_request"),
        BadRequest(name: "scope without openid", parameters: [("scope", "profile"), ("login_hint", "alice")],
                   error: "invalid_scope"),
        BadRequest(name: "scope the client may not have", parameters: [("scope", "openid payments"), ("login_hint", "alice")],
                   error: "invalid_scope"),
        BadRequest(name: "malformed scope", parameters: [("scope", "openid \"quoted\""), ("login_hint", "alice")],
                   error: "invalid_scope"),
        BadRequest(name: "no hint", parameters: [("scope", "openid")], error: "invalid_request"),
        BadRequest(name: "login_hint sent empty counts as omitted", parameters: [("scope", "openid"), ("login_hint", "")],
                   error: "invalid_request"),
        BadRequest(name: "two hints", parameters: [("scope", "openid"), ("login_hint", "alice"), ("id_token_hint", "x.y.z")],
                   error: "invalid_request"),
        BadRequest(name: "login_hint_token", parameters: [("scope", "openid"), ("login_hint_token", "eyJ.e30.sig")],
                   error: "invalid_request"),
        BadRequest(name: "unknown user", parameters: [("scope", "openid"), ("login_hint", "nobody")], error: "unknown_user_id"),
        BadRequest(name: "id_token_hint that is not a JWS", parameters: [("scope", "openid"), ("id_token_hint", "not-a-token")],
                   error: "invalid_request"),
        BadRequest(name: "binding message of 65 characters",
                   parameters: [("scope", "openid"), ("login_hint", "alice"), ("binding_message", String(repeating: "a", count: 65))],
                   error: "invalid_binding_message"),
        BadRequest(name: "binding message with a line break",
                   parameters: [("scope", "openid"), ("login_hint", "alice"), ("binding_message", "Pay\nnow")],
                   error: "invalid_binding_message"),
        BadRequest(name: "binding message with markup",
                   parameters: [("scope", "openid"), ("login_hint", "alice"), ("binding_message", "<b>Pay</b>")],
                   error: "invalid_binding_message"),
        BadRequest(name: "requested_expiry 0", parameters: [("scope", "openid"), ("login_hint", "alice"), ("requested_expiry", "0")],
                   error: "invalid_request"),
        BadRequest(name: "requested_expiry 301",
                   parameters: [("scope", "openid"), ("login_hint", "alice"), ("requested_expiry", "301")], error: "invalid_request"),
        BadRequest(name: "requested_expiry not an integer",
                   parameters: [("scope", "openid"), ("login_hint", "alice"), ("requested_expiry", "1.5")], error: "invalid_request"),
        BadRequest(name: "malformed acr_values",
                   parameters: [("scope", "openid"), ("login_hint", "alice"), ("acr_values", "a\\b")], error: "invalid_request"),
        BadRequest(name: "user_code", parameters: [("scope", "openid"), ("login_hint", "alice"), ("user_code", "1234")],
                   error: "invalid_request"),
        BadRequest(name: "signed request object", parameters: [("request", "eyJ.e30.sig"), ("login_hint", "alice")],
                   error: "invalid_request"),
        BadRequest(name: "request object by reference", parameters: [("scope", "openid"), ("login_hint", "alice"),
                                                                      ("request_uri", "urn:example:request")],
                   error: "invalid_request"),
        BadRequest(name: "authorization details of a type the tenant has not registered",
                   parameters: [("scope", "openid"), ("login_hint", "alice"),
                                ("authorization_details", #"[{"type":"payment_initiation"}]"#)],
                   error: "invalid_authorization_details"),
        BadRequest(name: "a parameter given twice", parameters: [("scope", "openid"), ("scope", "openid"), ("login_hint", "alice")],
                   error: "invalid_request"),
        BadRequest(name: "user without a device", parameters: [("scope", "openid"), ("login_hint", "deviceless")],
                   error: "access_denied", status: 403),
        BadRequest(name: "disabled user", parameters: [("scope", "openid"), ("login_hint", "retired")],
                   error: "access_denied", status: 403),
    ]

    @Test("every malformed or unacceptable bc-authorize request gets its exact error")
    func badRequestsGetTheirError() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            _ = try await server.enrolledUser("alice")
            _ = try await server.createUser("deviceless")
            #expect(try await server.admin("POST", "/admin/v1/tenants/default/users",
                                           json: ["username": "retired", "status": "disabled"]).status == 201)
            for bad in Self.badRequests {
                let answer = try await server.bcAuthorize(client, bad.parameters)
                #expect(answer.status == bad.status, "\(bad.name): \(answer.error ?? "") \(answer.errorDescription ?? "")")
                #expect(answer.error == bad.error, "\(bad.name): \(answer.errorDescription ?? "")")
                try Self.expectOAuthErrorShape(answer, bad.name)
            }
        }
    }

    @Test("a user without a device is told so in the error description")
    func noDeviceIsExplained() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            _ = try await server.createUser("deviceless")
            let answer = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "deviceless")])
            #expect(answer.status == 403)
            #expect(answer.errorDescription == "the user has no active device to approve on")
        }
    }

    @Test("a successful bc-authorize answers auth_req_id, expires_in and interval, never cached")
    func acknowledgement() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            let byName = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "alice")])
            #expect(byName.status == 200)
            let authReqID = try #require(byName["auth_req_id"] as? String)
            #expect(authReqID.count >= 43)
            #expect(authReqID.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) })
            #expect(byName["expires_in"] as? Int == 300)
            #expect(byName["interval"] as? Int == 5)
            #expect(byName.header("Content-Type") == "application/json")
            #expect(byName.header("Cache-Control") == "no-store")
            #expect(byName.header("Pragma") == "no-cache")

            let byID = try await server.bcAuthorize(
                client, [("login_hint", alice.userID), ("scope", "openid"), ("requested_expiry", "120"), ("unknown", "ignored")])
            #expect(byID.status == 200, "\(byID.errorDescription ?? "")")
            #expect(byID["expires_in"] as? Int == 120)
            #expect(byID["auth_req_id"] as? String != authReqID)

            // A hint that is one user's id and another's username names the first: the other
            // has no device, so finding them would be refused.
            _ = try await server.createUser(alice.userID)
            let idFirst = try await server.bcAuthorize(client, [("login_hint", alice.userID), ("scope", "openid")])
            #expect(idFirst.status == 200, "\(idFirst.errorDescription ?? "")")
        }
    }

    @Test("binding messages in other scripts are accepted and reach the device verbatim")
    func unicodeBindingMessage() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            _ = try await server.startApproval(client, user: "alice", bindingMessage: "Überweisung 100,00 EUR #4711")
            let envelope = try #require(try await alice.device.inbox().first)
            #expect(try alice.device.open(envelope).details.bindingMessage == "Überweisung 100,00 EUR #4711")
        }
    }

    // MARK: - Client authentication

    @Test("client_secret_basic and client_secret_post both authenticate")
    func bothSecretMethodsWork() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            _ = try await server.enrolledUser("alice")
            let parameters = [("scope", "openid"), ("login_hint", "alice")]
            #expect(try await server.form("/bc-authorize", parameters, basic: client).status == 200)
            let posted = try await server.form(
                "/bc-authorize", parameters + [("client_id", client.id), ("client_secret", client.secret)])
            #expect(posted.status == 200, "\(posted.errorDescription ?? "")")
            let repeatedID = try await server.form("/bc-authorize", parameters + [("client_id", client.id)], basic: client)
            #expect(repeatedID.status == 200, "\(repeatedID.errorDescription ?? "")")
        }
    }

    @Test("failed client authentication is 401 invalid_client with a Basic challenge naming the issuer")
    func clientAuthenticationFailures() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            let foreign = try await server.createClient(tenant: "acme")
            let parameters = [("scope", "openid"), ("login_hint", "alice")]
            let cases: [(String, [(String, String)], TestClient?)] = [
                ("no credentials", parameters, nil),
                ("wrong secret (basic)", parameters, TestClient(id: client.id, secret: client.secret + "x")),
                ("wrong secret (post)", parameters + [("client_id", client.id), ("client_secret", "css_wrong")], nil),
                ("unknown client", parameters + [("client_id", "cli_nobody"), ("client_secret", client.secret)], nil),
                ("client of another tenant", parameters, foreign),
                ("client_id without secret", parameters + [("client_id", client.id)], nil),
            ]
            for (name, form, basic) in cases {
                for path in ["/bc-authorize", "/token", "/bc-authorize/receipt"] {
                    let answer = try await server.rawForm(path, form, basic: basic)
                    #expect(answer.status == 401, "\(name) at \(path)")
                    #expect(answer.error == "invalid_client", "\(name) at \(path)")
                    #expect(answer.header("WWW-Authenticate") == "Basic realm=\"\(server.base)\"", "\(name) at \(path)")
                    #expect(answer.header("Cache-Control") == "no-store", "\(name) at \(path)")
                }
            }
            let bearer = try await server.rawForm("/bc-authorize", parameters, authorization: "Bearer abc")
            #expect(bearer.status == 401)
            #expect(bearer.error == "invalid_client")
        }
    }

    @Test("using Basic and client_secret together is invalid_request")
    func twoMethodsAtOnce() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let other = try await server.createClient(name: "Other")
            let both = try await server.form(
                "/token", [("grant_type", Self.grantType), ("client_secret", client.secret)], basic: client)
            #expect(both.status == 400)
            #expect(both.error == "invalid_request")
            let mismatched = try await server.form("/token", [("grant_type", Self.grantType), ("client_id", other.id)], basic: client)
            #expect(mismatched.status == 400)
            #expect(mismatched.error == "invalid_request")
        }
    }

    @Test("a body that is not a form is invalid_request")
    func jsonBodyIsRefused() async throws {
        try await TestServer.routed { server in
            let answer = try await server.call("POST", "/token", json: ["grant_type": Self.grantType])
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.header("Pragma") == "no-cache")
            try Self.expectOAuthErrorShape(answer, "JSON body")
        }
    }

    // MARK: - Token endpoint

    @Test("token requests without a usable grant get their exact error")
    func tokenRequestErrors() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let other = try await server.createClient(name: "Other")
            _ = try await server.enrolledUser("alice")
            let othersRequest = try await server.startApproval(other, user: "alice")
            let cases: [(String, [(String, String)], String)] = [
                ("no grant_type", [("auth_req_id", othersRequest)], "invalid_request"),
                ("implicit grant", [("grant_type", "implicit")], "unsupported_grant_type"),
                ("password grant", [("grant_type", "password"), ("username", "alice")], "unsupported_grant_type"),
                ("no auth_req_id", [("grant_type", Self.grantType)], "invalid_request"),
                ("unknown auth_req_id", [("grant_type", Self.grantType), ("auth_req_id", "nope")], "invalid_grant"),
                ("another client's auth_req_id", [("grant_type", Self.grantType), ("auth_req_id", othersRequest)], "invalid_grant"),
            ]
            for (name, parameters, error) in cases {
                let answer = try await server.form("/token", parameters, basic: client)
                #expect(answer.status == 400, "\(name)")
                #expect(answer.error == error, "\(name): \(answer.errorDescription ?? "")")
                #expect(answer.header("Cache-Control") == "no-store", "\(name)")
                #expect(answer.header("Pragma") == "no-cache", "\(name)")
                try Self.expectOAuthErrorShape(answer, "\(name)")
            }
        }
    }

    @Test("the first poll is never slow_down; polling early is, and the interval grows by 5")
    func pollingRate() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            _ = try await server.enrolledUser("alice")
            let authReqID = try await server.startApproval(client, user: "alice")
            #expect(try await server.token(client, authReqID).error == "authorization_pending")
            server.clock.advance(by: 5)
            #expect(try await server.token(client, authReqID).error == "authorization_pending")
            server.clock.advance(by: 4)
            let early = try await server.token(client, authReqID)
            #expect(early.status == 400)
            #expect(early.error == "slow_down")
            #expect(try await server.transaction(authReqID).pollInterval == 10)
            server.clock.advance(by: 10)
            #expect(try await server.token(client, authReqID).error == "authorization_pending")
        }
    }

    @Test("a denied request is access_denied with 400 at the token endpoint")
    func deniedIsAccessDenied() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            let authReqID = try await server.startApproval(client, user: "alice")
            try await server.decide(authReqID, .denied, by: alice)
            let answer = try await server.token(client, authReqID)
            #expect(answer.status == 400)
            #expect(answer.error == "access_denied")
        }
    }

    @Test("an undecided request past its expiry is expired_token")
    func expiryIsExpiredToken() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            _ = try await server.enrolledUser("alice")
            let authReqID = try await server.startApproval(client, user: "alice", extra: [("requested_expiry", "10")])
            server.clock.advance(by: 10)
            let answer = try await server.token(client, authReqID)
            #expect(answer.status == 400)
            #expect(answer.error == "expired_token")
            let receipt = try await server.form("/bc-authorize/receipt", [("auth_req_id", authReqID)], basic: client)
            #expect(receipt.error == "expired_token")
        }
    }

    @Test("an approval given just before expiry can be collected for one more poll interval")
    func approvalNearExpiry() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            let onTime = try await server.startApproval(client, user: "alice", extra: [("requested_expiry", "10")])
            let late = try await server.startApproval(client, user: "alice", extra: [("requested_expiry", "10")])
            server.clock.advance(by: 9)
            try await server.decide(onTime, .approved, by: alice)
            try await server.decide(late, .approved, by: alice)
            server.clock.advance(by: 4)
            #expect(try await server.token(client, onTime).status == 200)
            server.clock.advance(by: 2)
            #expect(try await server.token(client, late).error == "expired_token")
        }
    }

    @Test("an approved request gives tokens once, with the claims relying parties check")
    func approvedRequestGivesTokens() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient(scopes: ["openid", "payments"])
            let alice = try await server.enrolledUser("alice")
            let started = try await server.bcAuthorize(client, [
                ("scope", "payments openid"), ("login_hint", "alice"),
                ("acr_values", "urn:other urn:countersign:acr:confirm"),
            ])
            let authReqID = try #require(started["auth_req_id"] as? String)
            server.clock.advance(by: 3)
            try await server.decide(authReqID, .approved, by: alice)
            let decidedAt = Int(try #require(try await server.transaction(authReqID).decidedAt).timeIntervalSince1970)
            server.clock.advance(by: 3)

            let tokens = try await server.token(client, authReqID)
            #expect(tokens.status == 200, "\(tokens.error ?? "") \(tokens.errorDescription ?? "")")
            #expect(tokens.header("Cache-Control") == "no-store")
            #expect(tokens.header("Pragma") == "no-cache")
            #expect(tokens["token_type"] as? String == "Bearer")
            #expect(tokens["expires_in"] as? Int == 600)
            #expect(tokens["scope"] as? String == "payments openid")

            let keys = try await server.jwks()
            let access = try server.verifiedClaims(try #require(tokens["access_token"] as? String), keys: keys)
            #expect(access.type == "at+jwt")
            #expect(access.claims["aud"] as? String == client.id)
            #expect(access.claims["client_id"] as? String == client.id)
            #expect(access.claims["scope"] as? String == "payments openid")
            #expect((access.claims["jti"] as? String)?.isEmpty == false)
            #expect(access.claims["exp"] as? Int == (access.claims["iat"] as? Int ?? 0) + 600)

            let id = try server.verifiedClaims(try #require(tokens["id_token"] as? String), keys: keys)
            #expect(id.type == "JWT")
            #expect(id.claims["iss"] as? String == server.base)
            #expect(id.claims["sub"] as? String == alice.userID)
            #expect(id.claims["aud"] as? String == client.id)
            #expect(id.claims["auth_time"] as? Int == decidedAt)
            #expect(id.claims["acr"] as? String == "urn:countersign:acr:confirm")
            #expect(id.claims["amr"] as? [String] == ["pop", "user"])
            #expect(id.claims["nonce"] == nil)

            let again = try await server.token(client, authReqID)
            #expect(again.status == 400)
            #expect(again.error == "invalid_grant")
        }
    }

    @Test("a user disabled after approving gets no tokens")
    func disabledAfterApproval() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            let authReqID = try await server.startApproval(client, user: "alice")
            try await server.decide(authReqID, .approved, by: alice)
            #expect(try await server.admin(
                "PATCH", "/admin/v1/tenants/default/users/\(alice.userID)", json: ["status": "disabled"]).status == 200)
            #expect(try await server.token(client, authReqID).error == "invalid_grant")
        }
    }

    @Test("an ID token this tenant issued to the client names the user as id_token_hint, even expired")
    func idTokenHint() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let other = try await server.createClient(name: "Other")
            let alice = try await server.enrolledUser("alice")
            let authReqID = try await server.startApproval(client, user: "alice")
            try await server.decide(authReqID, .approved, by: alice)
            let tokens = try await server.token(client, authReqID)
            let idToken = try #require(tokens["id_token"] as? String)
            let accessToken = try #require(tokens["access_token"] as? String)
            server.clock.advance(by: 3600)

            let hinted = try await server.bcAuthorize(client, [("scope", "openid"), ("id_token_hint", idToken)])
            #expect(hinted.status == 200, "\(hinted.errorDescription ?? "")")
            let envelope = try #require(try await alice.device.inbox().first)
            #expect(try alice.device.open(envelope).details.user.id == alice.userID)

            let cases: [(String, TestClient, String)] = [
                ("another client's ID token", other, idToken),
                ("an access token", client, accessToken),
                ("a tampered ID token", client, String(idToken.dropLast(4)) + "AAAA"),
            ]
            for (name, caller, hint) in cases {
                let answer = try await server.bcAuthorize(caller, [("scope", "openid"), ("id_token_hint", hint)])
                #expect(answer.status == 400, "\(name)")
                #expect(answer.error == "invalid_request", "\(name): \(answer.errorDescription ?? "")")
            }
        }
    }

    @Test("a tenant's endpoints live below /t/<slug> with that tenant as issuer")
    func tenantEndpoints() async throws {
        try await TestServer.routed { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            let client = try await server.createClient(tenant: "acme")
            let bob = try await server.enrolledUser("bob", tenant: "acme")
            let started = try await server.form("/t/acme/bc-authorize", [("scope", "openid"), ("login_hint", "bob")], basic: client)
            #expect(started.status == 200, "\(started.errorDescription ?? "")")
            let authReqID = try #require(started["auth_req_id"] as? String)
            #expect(try await server.rawForm("/bc-authorize", [("scope", "openid"), ("login_hint", "bob")], basic: client).status == 401)
            try await server.decide(authReqID, .approved, by: bob)
            let tokens = try await server.form(
                "/t/acme/token", [("grant_type", Self.grantType), ("auth_req_id", authReqID)], basic: client)
            #expect(tokens.status == 200, "\(tokens.errorDescription ?? "")")
            let keys = try await server.jwks(path: "/t/acme/jwks")
            let id = try server.verifiedClaims(try #require(tokens["id_token"] as? String), keys: keys)
            #expect(id.claims["iss"] as? String == server.base + "/t/acme")
        }
    }

    @Test("the receipt of an undecided request is authorization_pending, of an unknown one invalid_grant")
    func receiptBeforeDecision() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            let authReqID = try await server.startApproval(client, user: "alice")
            let pending = try await server.form("/bc-authorize/receipt", [("auth_req_id", authReqID)], basic: client)
            #expect(pending.status == 400)
            #expect(pending.error == "authorization_pending")
            #expect(try await server.form("/bc-authorize/receipt", [("auth_req_id", "nope")], basic: client).error == "invalid_grant")
            #expect(try await server.form("/bc-authorize/receipt", [], basic: client).error == "invalid_request")

            try await server.decide(authReqID, .denied, by: alice)
            let receipt = try await server.form("/bc-authorize/receipt", [("auth_req_id", authReqID)], basic: client)
            #expect(receipt.status == 200)
            #expect(receipt["auth_req_id_status"] as? String == "denied")
            #expect(receipt["device_id"] as? String == alice.device.id)
            #expect(receipt.header("Cache-Control") == "no-store")
        }
    }

    /// An OAuth error body holds `error` and `error_description` only, in the RFC 6749 §5.2 charset.
    static func expectOAuthErrorShape(_ answer: TestServer.Answer, _ name: String) throws {
        let members = Set(try #require(answer.json, "\(name): the body is not JSON").keys)
        #expect(members == ["error", "error_description"], "\(name): \(members)")
        let description = answer.errorDescription ?? ""
        #expect(description.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" }, "\(name)")
    }
}

extension TestServer {
    /// The stored request an `auth_req_id` names.
    func transaction(_ authReqID: String) async throws -> ApprovalTransaction {
        try #require(try await SQLApprovalTransactionRepository().find(
            authReqIDHash: ApprovalService.hash(authReqID: authReqID), on: database))
    }

    /// Records a decision as the user's device would, at the storage level.
    func decide(_ authReqID: String, _ status: ApprovalTransaction.Status, by user: EnrolledUser,
                factors: [String] = ["confirm"]) async throws {
        let transaction = try await transaction(authReqID)
        let recorded = try await SQLApprovalTransactionRepository().decide(
            id: transaction.id, status: status, deviceID: user.device.id, response: "signed-response", factors: factors,
            reason: nil, at: clock.now, on: database)
        #expect(recorded)
    }

    /// A form POST over a plain socket. FoundationNetworking on Linux never completes a request
    /// answered 401 with a `Basic` challenge (it waits for credentials to retry with), so the
    /// tests that expect one speak HTTP/1.1 themselves, on a thread of their own so that the
    /// blocking socket never holds up the cooperative pool the server answers on.
    /// `body` and `contentType`, when given, replace the encoded form and its media type.
    func rawForm(_ path: String, _ parameters: [(String, String)], basic client: TestClient? = nil,
                 authorization: String? = nil, body rawBody: String? = nil,
                 contentType: String = "application/x-www-form-urlencoded", source: String = "127.0.0.1",
                 method: String = "POST") async throws -> Answer {
        let body = rawBody ?? Self.formEncoded(parameters)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        head += "Content-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\n"
        if let client {
            let credentials = "\(Self.formComponent(client.id)):\(Self.formComponent(client.secret))"
            head += "Authorization: Basic \(Data(credentials.utf8).base64EncodedString())\r\n"
        } else if let authorization {
            head += "Authorization: \(authorization)\r\n"
        }
        if let router {
            // In memory there is no socket to come from: a test that needs its own source address
            // runs on a listening server.
            precondition(source == "127.0.0.1", "a source address needs a listening server: start it with TestServer.with")
            var request = URLRequest(url: try #require(URL(string: base + path)))
            request.httpMethod = method
            request.httpBody = Data(body.utf8)
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
            if let client {
                let credentials = "\(Self.formComponent(client.id)):\(Self.formComponent(client.secret))"
                request.setValue("Basic \(Data(credentials.utf8).base64EncodedString())", forHTTPHeaderField: "Authorization")
            } else if let authorization {
                request.setValue(authorization, forHTTPHeaderField: "Authorization")
            }
            return try await Self.route(request, path: path, through: router)
        }
        let port = running.port
        let request = Array((head + "\r\n" + body).utf8)
        let text = try await onThreadOfItsOwn {
            let connection = try RawHTTPConnection(port: port, source: source)
            try connection.send(request)
            return try connection.receiveAll()
        }
        let split = try #require(text.range(of: "\r\n\r\n"), "no complete response")
        let lines = text[..<split.lowerBound].split(separator: "\r\n")
        let status = try #require(lines.first.flatMap { Int($0.split(separator: " ")[1]) })
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Answer(status: status, data: Data(text[split.upperBound...].utf8), headers: headers)
    }

    /// The published ES256 token-signing keys at `path`, by `kid`.
    func jwks(path: String) async throws -> [String: P256.Signing.PublicKey] {
        let answer = try await call("GET", path)
        #expect(answer.status == 200)
        let keys = try #require(answer["keys"] as? [[String: any Sendable]])
        var byID: [String: P256.Signing.PublicKey] = [:]
        for key in keys where key["kty"] as? String == "EC" {
            let jwk = try JSONDecoder().decode(ECPublicJWK.self, from: JSONSerialization.data(withJSONObject: key))
            byID[try #require(key["kid"] as? String)] = try jwk.signingKey()
        }
        return byID
    }
}

/// The parse steps of `bc-authorize` and the OAuth plumbing, without a server.
@Suite("CIBA request parameters")
struct CIBAParameterTests {
    static let client = Client(
        id: "cli_1", tenantID: "ten_1", name: "Bank", scopes: ["openid", "payments"], deliveryMode: .poll,
        notificationEndpoint: nil, createdAt: Date(), updatedAt: Date())

    @Test("binding messages of letters and digits in any script, spaces and +-_.,:# are accepted",
          arguments: ["1234", "Pay 42.00 EUR to ACME", "Überweisung 100,00 EUR", "支付 100 元", "भुगतान 500",
                      "Cafe\u{301} #12", "a+b-c_d.e,f:g", "١٢٣", String(repeating: "x", count: 64)])
    func acceptedBindingMessages(message: String) throws {
        #expect(try BindingMessage(message).text == message)
    }

    @Test("binding messages with anything else are invalid_binding_message",
          arguments: [String(repeating: "x", count: 65), "   ", "Pay\nnow", "Tab\there", "\"quoted\"", "<b>", "100%",
                      "Pay 5 €", "👍", "a\u{202E}b", "no\u{00A0}break", "\u{301}leading mark", "1\u{20E3}", "back\\slash"])
    func refusedBindingMessages(message: String) {
        #expect(throws: BackchannelAuthenticationError.self) { try BindingMessage(message) }
        #expect((try? BindingMessage(message)) == nil)
        do {
            _ = try BindingMessage(message)
        } catch let error as BackchannelAuthenticationError {
            #expect(error.oauthError.code == .invalidBindingMessage)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("requested_expiry accepts 1 to 300 whole seconds, given as a string", arguments: [("1", 1), ("120", 120), ("300", 300)])
    func acceptedExpiry(raw: String, seconds: Int) throws {
        #expect(try RequestedExpiry(raw).seconds == seconds)
    }

    @Test("requested_expiry defaults to 300 seconds")
    func defaultExpiry() throws {
        #expect(try RequestedExpiry(nil).seconds == 300)
    }

    @Test("any other requested_expiry is invalid_request", arguments: ["0", "-5", "301", "1.5", "+5", " 5", "abc", "99999999999999999999", "05", "060", "0300"])
    func refusedExpiry(raw: String) {
        #expect(throws: BackchannelAuthenticationError.invalidRequestedExpiry) { try RequestedExpiry(raw) }
    }

    @Test("scope must include openid and only scopes allowed to the client; order and repeats do not matter")
    func scope() throws {
        #expect(try Scope("payments openid payments", allowedFor: Self.client).values == ["payments", "openid"])
        #expect(throws: ScopeError.missing) { try Scope(nil, allowedFor: Self.client) }
        #expect(throws: ScopeError.withoutOpenID) { try Scope("payments", allowedFor: Self.client) }
        #expect(throws: ScopeError.notAllowed("email")) { try Scope("openid email", allowedFor: Self.client) }
        #expect(throws: ScopeError.malformed) { try Scope("openid pay\\ments", allowedFor: Self.client) }
        #expect(throws: ScopeError.malformed) { try Scope(" ", allowedFor: Self.client) }
    }

    @Test("form parameters: + and %XX decode, empty values count as omitted, repeats and other bodies are refused")
    func formParameters() throws {
        let form = try FormParameters(
            body: Data("binding_message=Pay+42%2C00+%E2%82%AC&login_hint=&scope=openid".utf8),
            contentType: "application/x-www-form-urlencoded; charset=UTF-8")
        #expect(form["binding_message"] == "Pay 42,00 €")
        #expect(form["login_hint"] == nil)
        #expect(form["scope"] == "openid")
        let form2 = "application/x-www-form-urlencoded"
        #expect(throws: FormError.duplicate("a")) { try FormParameters(body: Data("a=1&a=2".utf8), contentType: form2) }
        #expect(throws: FormError.notForm) { try FormParameters(body: Data("{}".utf8), contentType: "application/json") }
        #expect(throws: FormError.notForm) { try FormParameters(body: Data(), contentType: nil) }
        #expect(throws: FormError.malformedEncoding) { try FormParameters(body: Data("a=%zz".utf8), contentType: form2) }
        #expect(throws: FormError.malformedEncoding) { try FormParameters(body: Data("a=%ff".utf8), contentType: form2) }
    }

    @Test("Basic credentials are form-encoded id and secret; client_secret_post needs both parameters")
    func credentials() throws {
        let form = "application/x-www-form-urlencoded"
        let empty = try FormParameters(body: Data(), contentType: form)
        let basic = "Basic " + Data("cli%3Aa:s+e%25cret".utf8).base64EncodedString()
        #expect(try ClientAuthentication.credentials(authorization: basic, form: empty) == .basic(id: "cli:a", secret: "s e%cret"))
        let posted = try FormParameters(body: Data("client_id=cli_1&client_secret=s".utf8), contentType: form)
        #expect(try ClientAuthentication.credentials(authorization: nil, form: posted) == .post(id: "cli_1", secret: "s"))
        #expect(throws: ClientAuthenticationError.severalMethods) {
            try ClientAuthentication.credentials(authorization: basic, form: posted)
        }
        #expect(throws: ClientAuthenticationError.missing) { try ClientAuthentication.credentials(authorization: nil, form: empty) }
        #expect(throws: ClientAuthenticationError.malformedBasic) {
            try ClientAuthentication.credentials(authorization: "Basic !!!", form: empty)
        }
        #expect(throws: ClientAuthenticationError.unsupportedScheme) {
            try ClientAuthentication.credentials(authorization: "Bearer abc", form: empty)
        }
    }

    @Test("error statuses follow CIBA §13 and descriptions keep to the RFC 6749 §5.2 characters")
    func oauthErrors() {
        #expect(OAuthError(.invalidClient, "x").status == .unauthorized)
        #expect(OAuthError(.accessDenied, "x").status == .forbidden)
        #expect(TokenRequestError.denied.oauthError.status == .badRequest)
        for code in OAuthError.Code.allCases where code != .invalidClient && code != .accessDenied {
            #expect(OAuthError(code, "x").status == .badRequest, "\(code)")
        }
        #expect(OAuthError(.invalidRequest, "say \"hi\"\r\n\tüber\\").errorDescription == "say 'hi'????ber?")
    }

    @Test("amr is pop plus the RFC 8176 method of each known factor; acr is the class of what was used")
    func authenticationContext() {
        let confirm = AuthenticationContext(factors: ["confirm"], required: .confirm)
        #expect(confirm.amr == ["pop", "user"])
        #expect(confirm.acr == "urn:countersign:acr:confirm")
        #expect(AuthenticationContext(factors: ["telepathy"], required: .confirm).amr == ["pop"])
        #expect(AuthenticationContext(factors: [], required: nil).acr == "urn:countersign:acr:confirm")
        let pin = AuthenticationContext(factors: ["pin"], required: .biometric)
        #expect(pin.acr == "urn:countersign:acr:pin" && pin.amr == ["pop", "pin", "mfa"])
        let touch = AuthenticationContext(factors: ["biometric"], required: .biometric, biometry: "fingerprint")
        #expect(touch.acr == "urn:countersign:acr:biometric" && touch.amr == ["pop", "fpt", "mfa"])
        #expect(AuthenticationContext(factors: ["custom"], required: .custom).amr == ["pop"])
        #expect(AuthenticationContext(factors: ["number_match"], required: .numberMatch).acr == "urn:countersign:acr:number-match")
    }
}
