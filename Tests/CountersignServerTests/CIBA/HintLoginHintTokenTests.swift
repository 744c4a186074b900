import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// `login_hint_token` in Countersign's format: a JWT the client signs with a registered key,
/// naming the user with an RFC 9493 `sub_id`. The router is driven in memory; accepted tokens,
/// which name a stored user, also run on PostgreSQL.
@Suite("login_hint_token")
struct HintLoginHintTokenTests {
    /// What a case builds its token from.
    struct Context: Sendable {
        let server: TestServer
        let client: KeyClient
        let userID: String

        func claims(_ changes: [String: JSONValue?] = [:]) -> [String: JSONValue] {
            var claims: [String: JSONValue] = [
                "iss": .string(client.id), "aud": .string(server.base), "iat": server.epoch(), "exp": server.epoch(300),
                "sub_id": .object(["format": .string("opaque"), "id": .string("alice")]),
            ]
            for (name, value) in changes { claims[name] = value }
            return claims
        }

        func token(_ changes: [String: JSONValue?] = [:], header: [String: JSONValue] = [:]) throws -> String {
            try client.key.jwt(claims(changes), header: header)
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let token: @Sendable (Context) throws -> String
        let description: String
        var testDescription: String { name }
    }

    static let accepted: [Case] = [
        Case(name: "opaque username", token: { try $0.token() }, description: ""),
        Case(name: "opaque user id",
             token: { try $0.token(["sub_id": .object(["format": .string("opaque"), "id": .string($0.userID)])]) }, description: ""),
        Case(name: "iss_sub of this issuer",
             token: { context in
                 try context.token(["sub_id": .object([
                     "format": .string("iss_sub"), "iss": .string(context.server.base), "sub": .string(context.userID),
                 ])])
             }, description: ""),
    ]

    static let rejections: [Case] = [
        Case(name: "unsigned", token: { ClientSigningKey.unsigned($0.claims()) },
             description: "login_hint_token must be signed with ES256 or RS256, not none"),
        Case(name: "signed by another key", token: { try ClientSigningKey.es256(kid: $0.client.key.kid).jwt($0.claims()) },
             description: "login_hint_token has a signature that does not verify with the client's key"),
        Case(name: "unknown kid", token: { try $0.token(header: ["kid": .string("nope")]) },
             description: "login_hint_token is not signed with a key the client registered (kid, alg)"),
        Case(name: "not a JWS", token: { _ in "eyJ.e30.sig" },
             description: "login_hint_token is not a compact JWS with a JSON header and JSON claims"),
        Case(name: "iss of another client", token: { try $0.token(["iss": .string("cli_other")]) },
             description: "login_hint_token must have the client_id as iss"),
        Case(name: "aud of another server", token: { try $0.token(["aud": .string("https://other.example.com")]) },
             description: "login_hint_token must name the issuer <issuer> in aud"),
        Case(name: "no exp", token: { try $0.token(["exp": nil]) }, description: "login_hint_token has no exp"),
        Case(name: "not valid yet", token: { try $0.token(["nbf": $0.server.epoch(600)]) },
             description: "login_hint_token is not valid yet (nbf)"),
        Case(name: "valid for more than a day", token: { try $0.token(["exp": $0.server.epoch(86_401)]) },
             description: "login_hint_token may be valid for at most 86400 seconds (exp - iat)"),
        Case(name: "no sub_id", token: { try $0.token(["sub_id": nil]) }, description: "login_hint_token has no sub_id"),
        Case(name: "sub_id of format email",
             token: { try $0.token(["sub_id": .object(["format": .string("email"), "email": .string("a@example.com")])]) },
             description: "login_hint_token must name the user with a sub_id of format opaque or iss_sub"),
        Case(name: "opaque sub_id without id", token: { try $0.token(["sub_id": .object(["format": .string("opaque")])]) },
             description: "login_hint_token has an opaque sub_id without an id"),
        Case(name: "iss_sub of another issuer",
             token: { context in
                 try context.token(["sub_id": .object([
                     "format": .string("iss_sub"), "iss": .string("https://other.example.com"), "sub": .string(context.userID),
                 ])])
             },
             description: "login_hint_token has an iss_sub sub_id of another issuer"),
        Case(name: "an expired token that is not signed",
             token: { ClientSigningKey.unsigned($0.claims(["exp": $0.server.epoch(-60)])) },
             description: "login_hint_token must be signed with ES256 or RS256, not none"),
    ]

    static func with(_ engine: Engine, _ body: (Context) async throws -> Void) async throws {
        try await TestServer.with(engine) { server in
            try await body(try await setUp(server))
        }
    }

    /// The same with the server's router driven in memory.
    static func routed(_ body: @Sendable (Context) async throws -> Void) async throws {
        try await TestServer.routed { server in
            try await body(try await setUp(server))
        }
    }

    /// A client with a registered key, and alice without a device.
    static func setUp(_ server: TestServer) async throws -> Context {
        let client = try await server.keyClient(method: "client_secret_basic")
        let userID = try await server.createUser("alice")
        return Context(server: server, client: client, userID: userID)
    }

    static func start(_ context: Context, token: String) async throws -> TestServer.Answer {
        try await context.server.rawForm(
            "/bc-authorize", [("scope", "openid"), ("login_hint_token", token)], basic: try context.client.basic)
    }

    @Test("a login_hint_token signed by the client names the user", arguments: accepted)
    func acceptedToken(accepted: Case) async throws {
        for engine in Engine.available {
            try await Self.with(engine) { context in
                let alice = try await context.server.enrollDevice(
                    for: context.userID, username: "alice", name: "alice's phone")
                let answer = try await Self.start(context, token: try accepted.token(context))
                #expect(answer.status == 200, "\(engine): \(answer.errorDescription ?? "")")
                let envelope = try #require(try await alice.device.inbox().first)
                #expect(try alice.device.open(envelope).details.user.id == context.userID)
            }
        }
    }

    @Test("every malformed or untrusted login_hint_token is invalid_request with its reason", arguments: rejections)
    func rejectedToken(rejection: Case) async throws {
        try await Self.routed { context in
            let answer = try await Self.start(context, token: try rejection.token(context))
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.errorDescription == rejection.description.replacingOccurrences(of: "<issuer>", with: context.server.base))
        }
    }

    @Test("a login_hint_token past its exp is expired_login_hint_token")
    func expiredToken() async throws {
        try await Self.routed { context in
            let answer = try await Self.start(
                context, token: try context.token(["iat": context.server.epoch(-600), "exp": context.server.epoch(-60)]))
            #expect(answer.status == 400)
            #expect(answer.error == "expired_login_hint_token")
            #expect(answer.errorDescription == "login_hint_token has expired")
        }
    }

    @Test("a login_hint_token naming nobody is unknown_user_id")
    func unknownUser() async throws {
        try await Self.routed { context in
            let token = try context.token(["sub_id": .object(["format": .string("opaque"), "id": .string("nobody")])])
            let answer = try await Self.start(context, token: token)
            #expect(answer.status == 400)
            #expect(answer.error == "unknown_user_id")
        }
    }

    @Test("a client without keys cannot send a login_hint_token")
    func clientWithoutKeys() async throws {
        try await Self.routed { context in
            let plain = try await context.server.createClient()
            let answer = try await context.server.rawForm(
                "/bc-authorize", [("scope", "openid"), ("login_hint_token", try context.token())], basic: plain)
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.errorDescription
                    == "login_hint_token must be signed with a key the client registered, and it has none (jwks)")
        }
    }

    @Test("a login_hint_token beside another hint is invalid_request")
    func tokenAndAnotherHint() async throws {
        try await Self.routed { context in
            let answer = try await context.server.rawForm(
                "/bc-authorize", [("scope", "openid"), ("login_hint", "alice"), ("login_hint_token", try context.token())],
                basic: try context.client.basic)
            #expect(answer.status == 400)
            #expect(answer.errorDescription == "send only one of login_hint, id_token_hint and login_hint_token")
        }
    }
}
