import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// Signed authentication requests (CIBA §7.1.1) at `bc-authorize` of a real server: accepted
/// when signed by the client's registered key, and `invalid_request` for every way they can be
/// wrong (decision 2 of the standards checklist). The router is driven in memory; the replay
/// check, whose ledger is storage, also runs on PostgreSQL.
@Suite("Signed authentication requests")
struct RequestObjectTests {
    /// What a rejection case builds its request from.
    struct Context: Sendable {
        let server: TestServer
        /// A client_secret_basic client with one registered ES256 key.
        let client: KeyClient
        /// Another such client.
        let other: KeyClient
        /// A client without keys.
        let plain: TestClient

        func claims(_ changes: [String: JSONValue?] = [:]) -> [String: JSONValue] {
            var claims = server.requestClaims(client.id)
            for (name, value) in changes { claims[name] = value }
            return claims
        }

        func signed(_ changes: [String: JSONValue?] = [:], header: [String: JSONValue] = [:]) throws -> [(String, String)] {
            [("request", try client.key.jwt(claims(changes), header: header))]
        }
    }

    /// A form sent by a client, and the description of its 400 (`<issuer>` stands for the issuer).
    struct Rejection: Sendable, CustomTestStringConvertible {
        let name: String
        let form: @Sendable (Context) throws -> [(String, String)]
        /// The plain client sends the form instead of the key client.
        var byPlainClient = false
        let description: String
        var testDescription: String { name }
    }

    static let outside = "is sent beside request; with a signed request every authentication parameter goes inside it"
    static let tooLong = "request may be valid for at most 3600 seconds (exp - nbf)"

    static let rejections: [Rejection] = [
        Rejection(name: "alg none", form: { [("request", ClientSigningKey.unsigned($0.claims()))] },
                  description: "request must be signed with ES256 or RS256, not none"),
        Rejection(name: "alg HS256", form: { try $0.signed(header: ["alg": .string("HS256")]) },
                  description: "request must be signed with ES256 or RS256, not HS256"),
        Rejection(name: "unknown kid", form: { try $0.signed(header: ["kid": .string("nope")]) },
                  description: "request is not signed with a key the client registered (kid, alg)"),
        Rejection(name: "signed by another client's key", form: { [("request", try $0.other.key.jwt($0.claims()))] },
                  description: "request's signature does not verify with the client's key"),
        Rejection(name: "not a JWS", form: { _ in [("request", "eyJ.e30.sig")] },
                  description: "request is not a compact JWS with a JSON header and JSON claims"),
        Rejection(name: "a fractional requested_expiry",
                  form: { context in
                      var text = context.claims().map { JSONValue.string($0.key).canonicalString + ":" + $0.value.canonicalString }
                      text.append(#""requested_expiry":1.5"#)
                      return [("request", try context.client.key.jws(payload: Data("{\(text.joined(separator: ","))}".utf8)))]
                  },
                  description: "request is not a compact JWS with a JSON header and JSON claims"),
        Rejection(name: "no iss", form: { try $0.signed(["iss": nil]) }, description: "request has no iss"),
        Rejection(name: "iss of another client", form: { try $0.signed(["iss": .string($0.other.id)]) },
                  description: "request's iss must be the client_id"),
        Rejection(name: "no aud", form: { try $0.signed(["aud": nil]) }, description: "request has no aud"),
        Rejection(name: "aud of another server", form: { try $0.signed(["aud": .string("https://other.example.com")]) },
                  description: "request's aud must name the issuer <issuer>"),
        Rejection(name: "no exp", form: { try $0.signed(["exp": nil]) }, description: "request has no exp"),
        Rejection(name: "expired", form: { try $0.signed(["exp": $0.server.epoch(-60)]) }, description: "request has expired (exp)"),
        Rejection(name: "exp 70 minutes ahead", form: { try $0.signed(["exp": $0.server.epoch(4200)]) }, description: tooLong),
        Rejection(name: "no iat", form: { try $0.signed(["iat": nil]) }, description: "request has no iat"),
        Rejection(name: "iat in the future", form: { try $0.signed(["iat": $0.server.epoch(120)]) },
                  description: "request was issued in the future (iat)"),
        Rejection(name: "no nbf", form: { try $0.signed(["nbf": nil]) }, description: "request has no nbf"),
        Rejection(name: "nbf 10 minutes ahead", form: { try $0.signed(["nbf": $0.server.epoch(600), "exp": $0.server.epoch(900)]) },
                  description: "request is not valid yet (nbf)"),
        Rejection(name: "nbf 70 minutes ago", form: { try $0.signed(["nbf": $0.server.epoch(-4200), "iat": $0.server.epoch(-4200)]) },
                  description: tooLong),
        Rejection(name: "no jti", form: { try $0.signed(["jti": nil]) }, description: "request has no jti"),
        Rejection(name: "client_id of another client", form: { try $0.signed(["client_id": .string($0.other.id)]) },
                  description: "request's client_id names another client"),
        Rejection(name: "scope as an array", form: { try $0.signed(["scope": .array([.string("openid")])]) },
                  description: "request's scope must be a string"),
        Rejection(name: "requested_expiry null", form: { try $0.signed(["requested_expiry": .null]) },
                  description: "request's requested_expiry must be a number or a string"),
        Rejection(name: "requested_expiry 301", form: { try $0.signed(["requested_expiry": .integer(301)]) },
                  description: "requested_expiry must be a whole number of seconds from 1 to 300"),
        Rejection(name: "login_hint outside the request", form: { try $0.signed() + [("login_hint", "alice")] },
                  description: "login_hint " + outside),
        Rejection(name: "binding_message outside the request", form: { try $0.signed() + [("binding_message", "Pay")] },
                  description: "binding_message " + outside),
        Rejection(name: "a client without keys", form: { try $0.signed() }, byPlainClient: true,
                  description: "request must be signed with a key the client registered, and the client has registered none (jwks)"),
        Rejection(name: "request_uri beside request", form: { try $0.signed() + [("request_uri", "urn:example:r")] },
                  description: "request_uri is not supported"),
    ]

    @Test("every wrong signed request is invalid_request with its reason", arguments: rejections)
    func rejectedRequest(rejection: Rejection) async throws {
        try await TestServer.routed { server in
            let context = Context(
                server: server, client: try await server.keyClient(method: "client_secret_basic"),
                other: try await server.keyClient(method: "client_secret_basic"), plain: try await server.createClient())
            let caller = try rejection.byPlainClient ? context.plain : context.client.basic
            let answer = try await server.rawForm("/bc-authorize", rejection.form(context), basic: caller)
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.errorDescription == rejection.description.replacingOccurrences(of: "<issuer>", with: server.base))
        }
    }

    @Test("a signed request with requested_expiry as a JSON number is accepted and its parameters used",
          arguments: ["ES256", "RS256"])
    func acceptedWithNumericExpiry(alg: String) async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient(alg == "ES256" ? .es256() : .rs256(), method: "client_secret_basic")
            let alice = try await server.enrolledUser("alice")
            var claims = server.requestClaims(client.id)
            claims["requested_expiry"] = .integer(120)
            claims["binding_message"] = .string("Pay 42.00 EUR to ACME")
            let answer = try await server.rawForm(
                "/bc-authorize", [("request", try client.key.jwt(claims))], basic: try client.basic)
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
            #expect(answer["expires_in"] as? Int == 120)
            let envelope = try #require(try await alice.device.inbox().first)
            #expect(try alice.device.open(envelope).details.bindingMessage == "Pay 42.00 EUR to ACME")
        }
    }

    @Test("requested_expiry as a JSON string is accepted too")
    func acceptedWithStringExpiry() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient(method: "client_secret_basic")
            _ = try await server.enrolledUser("alice")
            var claims = server.requestClaims(client.id)
            claims["requested_expiry"] = .string("90")
            let answer = try await server.rawForm(
                "/bc-authorize", [("request", try client.key.jwt(claims))], basic: try client.basic)
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
            #expect(answer["expires_in"] as? Int == 90)
        }
    }

    @Test("a private_key_jwt client sends its assertion beside the signed request")
    func signedRequestWithAssertion() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient()
            _ = try await server.enrolledUser("alice")
            let answer = try await server.asClient(
                client, "/bc-authorize", [("client_id", client.id), ("request", try client.key.jwt(server.requestClaims(client.id)))])
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        }
    }

    @Test("a signed request is accepted once: its jti replayed is invalid_request", arguments: Engine.available)
    func replayedRequest(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.keyClient(method: "client_secret_basic")
            _ = try await server.enrolledUser("alice")
            let form = [("request", try client.key.jwt(server.requestClaims(client.id)))]
            #expect(try await server.rawForm("/bc-authorize", form, basic: try client.basic).status == 200)
            let replayed = try await server.rawForm("/bc-authorize", form, basic: try client.basic)
            #expect(replayed.status == 400)
            #expect(replayed.error == "invalid_request")
            #expect(replayed.errorDescription == "request was already used (jti)")
        }
    }

    @Test("a client that must sign its requests is refused an unsigned one")
    func unsignedRequestRefusedWhenRequired() async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient(method: "client_secret_basic", extra: ["require_signed_request_object": true])
            _ = try await server.enrolledUser("alice")
            let basic = try client.basic
            let unsigned = try await server.rawForm("/bc-authorize", [("scope", "openid"), ("login_hint", "alice")], basic: basic)
            #expect(unsigned.status == 400)
            #expect(unsigned.error == "invalid_request")
            #expect(unsigned.errorDescription == "this client must send its authentication request signed, as request")
            let signed = try await server.rawForm(
                "/bc-authorize", [("request", try client.key.jwt(server.requestClaims(client.id)))], basic: basic)
            #expect(signed.status == 200, "\(signed.errorDescription ?? "")")
        }
    }
}

extension TestServer {
    /// The claims of a valid signed request of `clientID` for alice.
    func requestClaims(_ clientID: String) -> [String: JSONValue] {
        ["iss": .string(clientID), "aud": .string(base), "iat": epoch(), "nbf": epoch(), "exp": epoch(300),
         "jti": .string(UUID().uuidString), "scope": .string("openid"), "login_hint": .string("alice")]
    }
}

extension ClientSigningKey {
    /// A compact JWS over `payload` bytes as given, for claims no `JSONValue` can hold.
    func jws(payload: Data) throws -> String {
        let header = JSONValue.object(["alg": .string(alg), "kid": .string(kid)])
        let input = header.canonicalData.base64URLEncodedString + "." + payload.base64URLEncodedString
        return input + "." + (try signature(for: Data(input.utf8))).base64URLEncodedString
    }
}
