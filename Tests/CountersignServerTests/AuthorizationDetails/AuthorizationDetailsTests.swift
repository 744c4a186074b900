import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// RFC 9396 `authorization_details` at `bc-authorize` of a real server: accepted from the form
/// and from a signed request, refused with `invalid_authorization_details` for every way it can
/// be wrong, shown to the device in the sealed details and signed by it, and granted in the
/// token response, the access token, introspection and every refresh. The router is driven in
/// memory; the tokens' details also come from PostgreSQL, and push mode needs its dispatcher.
@Suite("Authorization details: requests, devices and tokens")
struct AuthorizationDetailsTests {
    typealias Fixtures = AuthorizationDetailsFixtures
    static let cibaGrant = "urn:openid:params:grant-type:ciba"

    static var expected: JSONValue {
        get throws { try JSONValue(parsing: Data(Fixtures.paymentDetails.utf8)) }
    }

    @Test("details sent in the form reach the device sealed, in details of version 2")
    func acceptedFromTheForm() async throws {
        try await TestServer.routed { server in
            try await server.registerDetailTypes()
            let client = try await server.detailsClient()
            let alice = try await server.enrolledUser("alice")
            let answer = try await server.bcAuthorize(client, [
                ("scope", "openid"), ("login_hint", "alice"), ("authorization_details", Fixtures.paymentDetails),
            ])
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
            let (details, _) = try alice.device.open(try #require(try await alice.device.inbox().first))
            #expect(details.version == TransactionDetails.authorizationDetailsVersion)
            #expect(details.authorizationDetails.map(JSONValue.array) == (try Self.expected))
            // The SDK hands the same details to the app.
            let request = try #require(try await alice.kit.pendingRequests().first)
            let opened = try await alice.kit.details(for: request)
            #expect(opened.authorizationDetails == (try Self.expected).arrayValue)
        }
    }

    @Test("details in a signed request are a JSON array claim, accepted alike")
    func acceptedFromASignedRequest() async throws {
        try await TestServer.routed { server in
            try await server.registerDetailTypes()
            let client = try await server.keyClient(
                method: "client_secret_basic", extra: ["authorization_details_types": ["payment_initiation"]])
            let alice = try await server.enrolledUser("alice")
            var claims = server.requestClaims(client.id)
            claims["authorization_details"] = try Self.expected
            let answer = try await server.rawForm(
                "/bc-authorize", [("request", try client.key.jwt(claims))], basic: try client.basic)
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
            let (details, _) = try alice.device.open(try #require(try await alice.device.inbox().first))
            #expect(details.authorizationDetails.map(JSONValue.array) == (try Self.expected))
        }
    }

    static let refusals: [(name: String, details: @Sendable () throws -> String, description: String)] = [
        ("not JSON", { "[{\"type\":" }, "authorization_details is not JSON"),
        ("not an array", { Fixtures.payment }, "authorization_details must be a JSON array of objects"),
        ("an element that is not an object", { "[1]" }, "authorization_details[0] must be a JSON object"),
        ("an element without a type", { #"[{"creditorName":"A"}]"# }, "authorization_details[0].type is required"),
        ("an unknown type", { #"[{"type":"crypto_transfer"}]"# },
         "authorization_details[0].type crypto_transfer is not a type of this server"),
        ("a type not registered for the client", { #"[{"type":"account_information"}]"# },
         "authorization_details[0].type account_information is not registered for this client"),
        ("a field the type does not allow", { try Fixtures.payment { $0["debtorAccount"] = .string("DE1") } },
         "authorization_details[0].debtorAccount is not a field of its type"),
        ("a field of the wrong kind", { try Fixtures.payment { $0["creditorName"] = .integer(7) } },
         "authorization_details[0].creditorName must be a string"),
        ("an amount that is not decimal", {
            try Fixtures.payment { $0["instructedAmount"] = .object(["amount": .string("12,50"), "currency": .string("EUR")]) }
        }, "authorization_details[0].instructedAmount.amount must be a decimal amount"),
        ("a required field missing", { try Fixtures.payment { $0["creditorAccount"] = nil } },
         "authorization_details[0].creditorAccount is required by its type"),
        ("more than 8 KiB", {
            try Fixtures.payment { $0["remittanceInformationUnstructured"] = .string(String(repeating: "r", count: 8200)) }
        },
         "authorization_details is longer than 8192 bytes"),
    ]

    @Test("each bad value is 400 invalid_authorization_details, and nothing is stored or sent")
    func refusedAndNothingStored() async throws {
        try await TestServer.routed { server in
            try await server.registerDetailTypes()
            let client = try await server.detailsClient()
            let alice = try await server.enrolledUser("alice")
            for refusal in Self.refusals {
                let answer = try await server.bcAuthorize(client, [
                    ("scope", "openid"), ("login_hint", "alice"), ("authorization_details", try refusal.details()),
                ])
                #expect(answer.status == 400, "\(refusal.name)")
                #expect(answer.error == "invalid_authorization_details", "\(refusal.name)")
                #expect(answer.errorDescription?.hasPrefix(refusal.description) == true,
                        "\(refusal.name): \(answer.errorDescription ?? "")")
            }
            #expect(try await server.storedRequestCount() == 0)
            #expect(try await alice.device.inbox().isEmpty)
        }
    }

    @Test("a device that signs other details than it was sent (another amount) is refused")
    func signatureOverOtherDetailsIsRefused() async throws {
        try await TestServer.routed { server in
            try await server.registerDetailTypes()
            let client = try await server.detailsClient()
            let alice = try await server.enrolledUser("alice")
            let authReqID = try await Self.start(server, client)
            let envelope = try #require(try await alice.device.inbox().first)
            let (details, plaintext) = try alice.device.open(envelope)
            var altered = details
            altered.authorizationDetails = try JSONValue(parsing: Data(try Fixtures.payment {
                $0["instructedAmount"] = .object(["amount": .string("9123.50"), "currency": .string("EUR")])
            }.utf8)).arrayValue
            let forged = try alice.device.response(
                for: details, plaintext: plaintext, digest: TransactionDetails.digest(of: try altered.canonicalData()))
            let refused = try await alice.device.answer(envelope.id, response: forged)
            #expect(refused.status == 400)
            #expect(refused.error == "details_mismatch")
            #expect(try await server.token(client, authReqID).error == "authorization_pending")
            // Signed over what it was shown, the same device's approval is accepted.
            #expect(try await alice.device.decideNewest(.approve).status == 200)
            #expect(try await server.token(client, authReqID).status == 200)
        }
    }

    @Test("the token response, access token and introspection state the granted details", arguments: Engine.available)
    func tokensCarryTheDetails(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            try await server.registerDetailTypes()
            let client = try await server.detailsClient()
            let resourceServer = try await server.createClient(name: "Payments API")
            let alice = try await server.enrolledUser("alice")
            let tokens = try await Self.approvedTokens(server, client, alice)
            #expect(try JSONValue(parsing: tokens.data)["authorization_details"] == (try Self.expected))
            let accessToken = try tokens.string("access_token")
            #expect(try CompactJWS(parsing: accessToken).payloadJSON()["authorization_details"] == (try Self.expected))
            let introspected = try await server.introspect(resourceServer, accessToken)
            #expect(introspected["active"] as? Bool == true)
            #expect(try JSONValue(parsing: introspected.data)["authorization_details"] == (try Self.expected))
            let refreshIntrospected = try await server.introspect(client, try tokens.string("refresh_token"))
            #expect(try JSONValue(parsing: refreshIntrospected.data)["authorization_details"] == (try Self.expected))
        }
    }

    @Test("every refresh grants the same details again")
    func refreshCarriesTheDetails() async throws {
        try await TestServer.routed { server in
            try await server.registerDetailTypes()
            let client = try await server.detailsClient()
            let alice = try await server.enrolledUser("alice")
            let tokens = try await Self.approvedTokens(server, client, alice)
            let first = try await server.refresh(client, try tokens.string("refresh_token"))
            #expect(first.status == 200, "\(first.errorDescription ?? "")")
            #expect(try JSONValue(parsing: first.data)["authorization_details"] == (try Self.expected))
            let second = try await server.refresh(client, try first.string("refresh_token"), scope: "openid")
            #expect(try JSONValue(parsing: second.data)["authorization_details"] == (try Self.expected))
            let claims = try CompactJWS(parsing: try second.string("access_token")).payloadJSON()
            #expect(claims["authorization_details"] == (try Self.expected))
        }
    }

    @Test("without details, tokens and device details stay as they were")
    func absentDetailsChangeNothing() async throws {
        try await TestServer.routed { server in
            try await server.registerDetailTypes()
            let client = try await server.detailsClient()
            let alice = try await server.enrolledUser("alice")
            let started = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "alice")])
            let authReqID = try started.string("auth_req_id")
            let (details, plaintext) = try alice.device.open(try #require(try await alice.device.inbox().first))
            #expect(details.version == TransactionDetails.currentVersion)
            #expect(!String(decoding: plaintext, as: UTF8.self).contains("authorization_details"))
            #expect(try await alice.device.decideNewest(.approve).status == 200)
            let tokens = try await server.token(client, authReqID)
            #expect(tokens["authorization_details"] == nil)
            #expect(try CompactJWS(parsing: try tokens.string("access_token")).payloadJSON()["authorization_details"] == nil)
        }
    }

    @Test("push mode delivers the granted details with the tokens", arguments: Engine.available)
    func pushModeCarriesTheDetails(engine: Engine) async throws {
        try await TestServer.withReceiver(engine, configure: { $0.clientNotifications.pollInterval = .milliseconds(50) }) {
            server, receiver in
            receiver.acceptUnsigned()
            try await server.registerDetailTypes()
            let created = try await server.admin("POST", "/admin/v1/tenants/default/clients", json: [
                "name": "Shop", "scopes": ["openid"], "token_delivery_mode": "push", "notification_endpoint": receiver.url,
                "authorization_details_types": ["payment_initiation"],
            ])
            let client = TestClient(
                id: try #require((created["client"] as? [String: any Sendable])?["client_id"] as? String),
                secret: try #require(created["client_secret"] as? String))
            let alice = try await server.enrolledUser("alice")
            let started = try await server.bcAuthorize(client, [
                ("scope", "openid"), ("login_hint", "alice"), ("client_notification_token", "push-rar"),
                ("authorization_details", Fixtures.paymentDetails),
            ])
            #expect(started.status == 200, "\(started.errorDescription ?? "")")
            #expect(try await alice.device.decideNewest(.approve).status == 200)
            try await eventually("the tokens reach the client") { !receiver.calls.isEmpty }
            let body = try JSONValue(parsing: try #require(receiver.calls.first).body)
            #expect(body["authorization_details"] == (try Self.expected))
            let accessToken = try #require(body["access_token"]?.stringValue)
            #expect(try CompactJWS(parsing: accessToken).payloadJSON()["authorization_details"] == (try Self.expected))
        }
    }

    /// Starts a payment request for alice; returns its `auth_req_id`.
    static func start(_ server: TestServer, _ client: TestClient, scope: String = "openid") async throws -> String {
        let answer = try await server.bcAuthorize(client, [
            ("scope", scope), ("login_hint", "alice"), ("authorization_details", Fixtures.paymentDetails),
        ])
        #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        return try answer.string("auth_req_id")
    }

    /// A payment request approved on alice's device and exchanged for tokens with a refresh token.
    static func approvedTokens(_ server: TestServer, _ client: TestClient, _ alice: EnrolledUser) async throws -> TestServer.Answer {
        let authReqID = try await start(server, client, scope: "openid offline_access")
        #expect(try await alice.device.decideNewest(.approve).status == 200)
        let tokens = try await server.token(client, authReqID)
        #expect(tokens.status == 200, "\(tokens.errorDescription ?? "")")
        return tokens
    }
}

extension JSONValue {
    var arrayValue: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }
}
