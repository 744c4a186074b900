import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// `private_key_jwt` (OpenID Connect Core §9, RFC 7523 §3) at the client-authenticated
/// endpoints of a real server: what a valid assertion opens, and the exact answer to each way
/// an assertion can be wrong.
@Suite("Client authentication with private_key_jwt")
struct ClientAuthPrivateKeyJWTTests {
    static let start = [("scope", "openid"), ("login_hint", "alice")]

    /// What a rejection case builds its credentials from.
    struct Context: Sendable {
        let server: TestServer
        /// A `private_key_jwt` client with one ES256 key.
        let client: KeyClient
        /// A `client_secret_basic` client that registered an ES256 key (for signed requests).
        let secretClient: KeyClient

        func claims(_ changes: [String: JSONValue?]) -> [String: JSONValue] {
            var claims = server.assertionClaims(client.id)
            for (name, value) in changes { claims[name] = value }
            return claims
        }

        func signed(_ changes: [String: JSONValue?] = [:], header: [String: JSONValue] = [:]) throws -> [(String, String)] {
            TestServer.assertionParameters(try client.key.jwt(claims(changes), header: header))
        }
    }

    /// One wrong assertion and the description of its 401.
    struct Rejection: Sendable, CustomTestStringConvertible {
        let name: String
        let credentials: @Sendable (Context) throws -> [(String, String)]
        let description: String
        var testDescription: String { name }
    }

    static let unknownKey = "client_assertion is not signed with a key the client registered for private_key_jwt (kid, alg)"

    static let rejections: [Rejection] = [
        Rejection(name: "iss is another client", credentials: { try $0.signed(["iss": .string($0.secretClient.id)]) },
                  description: "client_assertion must name the client_id as both iss and sub"),
        Rejection(name: "sub is another client", credentials: { try $0.signed(["sub": .string($0.secretClient.id)]) },
                  description: "client_assertion must name the client_id as both iss and sub"),
        Rejection(name: "no iss", credentials: { try $0.signed(["iss": nil]) }, description: "client_assertion has no iss"),
        Rejection(name: "aud is another server", credentials: { try $0.signed(["aud": .string("https://other.example.com")]) },
                  description: "client_assertion's aud must name this issuer or one of its endpoints"),
        Rejection(name: "aud is a number", credentials: { try $0.signed(["aud": .integer(1)]) },
                  description: "client_assertion's aud must be a string or an array of strings"),
        Rejection(name: "expired", credentials: { try $0.signed(["iat": $0.server.epoch(-120), "exp": $0.server.epoch(-60)]) },
                  description: "client_assertion has expired (exp)"),
        Rejection(name: "no exp", credentials: { try $0.signed(["exp": nil]) }, description: "client_assertion has no exp"),
        Rejection(name: "exp is a string", credentials: { try $0.signed(["exp": .string("soon")]) },
                  description: "client_assertion's exp must be an integer NumericDate"),
        Rejection(name: "valid for longer than 5 minutes", credentials: { try $0.signed(["exp": $0.server.epoch(301)]) },
                  description: "client_assertion may be valid for at most 300 seconds (exp - iat)"),
        Rejection(name: "exp too far ahead without iat",
                  credentials: { try $0.signed(["iat": nil, "exp": $0.server.epoch(600)]) },
                  description: "client_assertion may be valid for at most 300 seconds (exp - iat)"),
        Rejection(name: "issued in the future", credentials: { try $0.signed(["iat": $0.server.epoch(120), "exp": $0.server.epoch(180)]) },
                  description: "client_assertion was issued in the future (iat)"),
        Rejection(name: "not valid yet", credentials: { try $0.signed(["nbf": $0.server.epoch(120)]) },
                  description: "client_assertion is not valid yet (nbf)"),
        Rejection(name: "no jti", credentials: { try $0.signed(["jti": nil]) }, description: "client_assertion has no jti"),
        Rejection(name: "jti of 257 characters", credentials: { try $0.signed(["jti": .string(String(repeating: "j", count: 257))]) },
                  description: "client_assertion has a jti longer than 256 characters"),
        Rejection(name: "unknown kid", credentials: { try $0.signed(header: ["kid": .string("not-registered")]) },
                  description: unknownKey),
        Rejection(name: "signed by another key under the registered kid",
                  credentials: { context in
                      let impostor = ClientSigningKey.es256(kid: context.client.key.kid)
                      return TestServer.assertionParameters(try impostor.jwt(context.claims([:])))
                  },
                  description: "client_assertion's signature does not verify with the client's key"),
        Rejection(name: "alg none", credentials: { TestServer.assertionParameters(ClientSigningKey.unsigned($0.claims([:]))) },
                  description: "client_assertion must be signed with ES256 or RS256, not none"),
        Rejection(name: "alg HS256", credentials: { try $0.signed(header: ["alg": .string("HS256")]) },
                  description: "client_assertion must be signed with ES256 or RS256, not HS256"),
        Rejection(name: "alg RS256 for an EC key", credentials: { try $0.signed(header: ["alg": .string("RS256")]) },
                  description: unknownKey),
        Rejection(name: "not a JWS", credentials: { _ in TestServer.assertionParameters("not.a-jws") },
                  description: "client_assertion is not a compact JWS with a JSON header and JSON claims"),
        Rejection(name: "an unknown client",
                  credentials: { context in
                      var claims = context.claims([:])
                      claims["iss"] = .string("cli_nobody")
                      claims["sub"] = .string("cli_nobody")
                      return TestServer.assertionParameters(try context.client.key.jwt(claims))
                  },
                  description: unknownKey),
        Rejection(name: "an assertion by a client_secret_basic client",
                  credentials: { context in
                      let claims = context.server.assertionClaims(context.secretClient.id)
                      return TestServer.assertionParameters(try context.secretClient.key.jwt(claims))
                  },
                  description: unknownKey),
        Rejection(name: "another assertion type",
                  credentials: { context in
                      [("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:saml2-bearer"),
                       ("client_assertion", try context.client.key.jwt(context.claims([:])))]
                  },
                  description: "client_assertion_type must be urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
        Rejection(name: "an assertion without its type",
                  credentials: { [("client_assertion", try $0.client.key.jwt($0.claims([:])))] },
                  description: "client_assertion and client_assertion_type are sent together"),
    ]

    @Test("every wrong client assertion is 401 invalid_client with a Basic challenge and its reason", arguments: rejections)
    func rejectedAssertion(rejection: Rejection) async throws {
        try await TestServer.routed { server in
            let context = Context(server: server, client: try await server.keyClient(),
                                  secretClient: try await server.keyClient(method: "client_secret_basic"))
            let answer = try await server.rawForm("/bc-authorize", Self.start + rejection.credentials(context))
            #expect(answer.status == 401)
            #expect(answer.error == "invalid_client")
            #expect(answer.errorDescription == rejection.description)
            #expect(answer.header("WWW-Authenticate") == "Basic realm=\"\(server.base)\"")
        }
    }

    @Test("an assertion signed ES256 or RS256 authenticates at bc-authorize and at the token endpoint",
          arguments: ["ES256", "RS256"])
    func acceptedAssertion(alg: String) async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient(alg == "ES256" ? .es256() : .rs256())
            _ = try await server.enrolledUser("alice")
            let started = try await server.asClient(client, "/bc-authorize", Self.start)
            #expect(started.status == 200, "\(started.errorDescription ?? "")")
            let authReqID = try #require(started["auth_req_id"] as? String)
            let polled = try await server.asClient(
                client, "/token", [("grant_type", CIBAEndpointTests.grantType), ("auth_req_id", authReqID)])
            #expect(polled.error == "authorization_pending", "\(polled.errorDescription ?? "")")
        }
    }

    @Test("aud may name the issuer, the token endpoint or the backchannel endpoint, alone or in an array")
    func acceptedAudiences() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient()
            let audiences: [JSONValue] = [
                .string(server.base), .string(server.base + "/token"), .string(server.base + "/bc-authorize"),
                .array([.string("https://other.example.com"), .string(server.base)]),
            ]
            for audience in audiences {
                var claims = server.assertionClaims(client.id)
                claims["aud"] = audience
                let answer = try await server.rawForm(
                    "/token", [("grant_type", CIBAEndpointTests.grantType), ("auth_req_id", "unknown")]
                        + TestServer.assertionParameters(try client.key.jwt(claims)))
                #expect(answer.error == "invalid_grant", "\(audience.canonicalString): \(answer.errorDescription ?? "")")
            }
        }
    }

    @Test("an assertion is accepted once: its jti replayed is invalid_client")
    func replayedAssertion() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient()
            let credentials = TestServer.assertionParameters(try client.key.jwt(server.assertionClaims(client.id)))
            let poll = [("grant_type", CIBAEndpointTests.grantType), ("auth_req_id", "unknown")]
            #expect(try await server.rawForm("/token", poll + credentials).error == "invalid_grant")
            let replayed = try await server.rawForm("/token", poll + credentials)
            #expect(replayed.status == 401)
            #expect(replayed.error == "invalid_client")
            #expect(replayed.errorDescription == "client_assertion was already used (jti)")
        }
    }

    @Test("a private_key_jwt client's secret does not authenticate it, however it is sent")
    func secretOfAKeyClientIsRefused() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient(method: "client_secret_basic")
            let secret = try #require(client.secret)
            let switched = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(client.id)", json: ["token_endpoint_auth_method": "private_key_jwt"])
            #expect(switched.status == 200, "\(switched.errorDescription ?? "")")
            let basic = try await server.rawForm("/bc-authorize", Self.start, basic: TestClient(id: client.id, secret: secret))
            let posted = try await server.rawForm(
                "/bc-authorize", Self.start + [("client_id", client.id), ("client_secret", secret)])
            for (name, answer) in [("basic", basic), ("post", posted)] {
                #expect(answer.status == 401, "\(name)")
                #expect(answer.error == "invalid_client", "\(name)")
                #expect(answer.errorDescription == "client authentication failed", "\(name)")
            }
        }
    }

    @Test("a client switched back from private_key_jwt has no secret until it is rotated")
    func switchingBackNeedsARotation() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient(method: "client_secret_post")
            let path = "/admin/v1/tenants/default/clients/\(client.id)"
            #expect(try await server.admin("PATCH", path, json: ["token_endpoint_auth_method": "private_key_jwt"]).status == 200)
            let refused = try await server.admin("POST", path + "/secret")
            #expect(refused.status == 409)
            #expect(try await server.admin("PATCH", path, json: ["token_endpoint_auth_method": "client_secret_basic"]).status == 200)
            let old = TestClient(id: client.id, secret: try #require(client.secret))
            #expect(try await server.rawForm("/token", [("grant_type", CIBAEndpointTests.grantType)], basic: old).status == 401)
            let rotated = try await server.admin("POST", path + "/secret")
            let fresh = TestClient(id: client.id, secret: try #require(rotated["client_secret"] as? String))
            #expect(try await server.rawForm("/token", [("grant_type", CIBAEndpointTests.grantType)], basic: fresh).error
                    == "invalid_request")
        }
    }

    @Test("an assertion with Basic credentials, a client_secret or another client's client_id is invalid_request")
    func mixedMethodsAreInvalidRequest() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient()
            let secretClient = try await server.keyClient(method: "client_secret_basic").basic
            let cases: [(String, [(String, String)], TestClient?, String)] = [
                ("Basic and an assertion", [], secretClient,
                 "use one client authentication method: Basic, client_secret or client_assertion"),
                ("client_secret and an assertion", [("client_secret", secretClient.secret)], nil,
                 "use one client authentication method: Basic, client_secret or client_assertion"),
                ("client_id of another client", [("client_id", secretClient.id)], nil,
                 "client_id names another client than the client's credentials"),
            ]
            for (name, extra, basic, description) in cases {
                let assertion = try client.key.jwt(server.assertionClaims(client.id))
                let answer = try await server.rawForm(
                    "/bc-authorize", Self.start + extra + TestServer.assertionParameters(assertion), basic: basic)
                #expect(answer.status == 400, "\(name)")
                #expect(answer.error == "invalid_request", "\(name)")
                #expect(answer.errorDescription == description, "\(name)")
            }
        }
    }

    @Test("an assertion may repeat the client's own client_id")
    func repeatedClientID() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient()
            let answer = try await server.asClient(
                client, "/token", [("client_id", client.id), ("grant_type", CIBAEndpointTests.grantType), ("auth_req_id", "x")])
            #expect(answer.error == "invalid_grant", "\(answer.errorDescription ?? "")")
        }
    }
}
