import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// Registering a client's authentication method and keys through the administration API: what
/// is accepted, what is shown back, and the precise 400 of each mistake.
@Suite("Client keys and authentication method")
struct ClientAuthRegistrationTests {
    static let ecKey = ClientSigningKey.es256(kid: "ec-1")

    static func ecJWK(_ changes: [String: (any Sendable)?] = [:]) -> [String: any Sendable] {
        var jwk = ecKey.publicJWK
        for (name, value) in changes { jwk[name] = value }
        return jwk
    }

    static func rsaJWK(modulusBytes: Int, exponent: String = "AQAB") -> [String: any Sendable] {
        var modulus = Data((0..<modulusBytes).map { _ in UInt8.random(in: 0...255) })
        modulus[0] |= 0x80
        modulus[modulus.count - 1] |= 1
        return ["kty": "RSA", "kid": "rsa-1", "n": modulus.base64URLEncodedString, "e": exponent]
    }

    /// One client registration and the field and reason of its 400.
    struct BadRegistration: Sendable, CustomTestStringConvertible {
        let name: String
        let fields: [String: any Sendable]
        let field: String
        let reason: String
        var testDescription: String { name }

        init(_ name: String, jwks: [String: any Sendable], reason: String) {
            self.init(name, fields: ["jwks": jwks], field: "jwks", reason: reason)
        }

        init(_ name: String, keys: [any Sendable], reason: String) {
            self.init(name, jwks: ["keys": keys], reason: reason)
        }

        init(_ name: String, fields: [String: any Sendable], field: String, reason: String) {
            self.name = name
            self.fields = fields
            self.field = field
            self.reason = reason
        }
    }

    static let badRegistrations: [BadRegistration] = [
        BadRegistration("no keys member", jwks: [:], reason: "must be a JSON Web Key Set: an object with a keys array"),
        BadRegistration("keys is not an array", jwks: ["keys": "ec-1"], reason: "must be a JSON Web Key Set: an object with a keys array"),
        BadRegistration("eleven keys", keys: (1...11).map { ecJWK(["kid": "k\($0)"]) }, reason: "must hold 1 to 10 keys"),
        BadRegistration("a key that is not an object", keys: ["ec-1"], reason: "key 1 is not a JSON object"),
        BadRegistration("a key without kid", keys: [ecJWK(["kid": nil])], reason: "key 1 has no kid"),
        BadRegistration("a kid with a line break", keys: [ecJWK(["kid": "a\nb"])],
                        reason: "key 1: kid must be 1 to 128 printable ASCII characters"),
        BadRegistration("two keys with one kid", keys: [ecJWK(), ecJWK()], reason: "kid ec-1 names two keys"),
        BadRegistration("a private EC key", keys: [ecJWK(["d": Data(repeating: 1, count: 32).base64URLEncodedString])],
                        reason: "key ec-1 holds the private member d; register only the public key, and replace this key pair: it is exposed"),
        BadRegistration("a symmetric key", keys: [["kty": "oct", "kid": "hmac", "k": "c2VjcmV0"]],
                        reason: "key hmac holds the private member k; register only the public key, and replace this key pair: it is exposed"),
        BadRegistration("an Ed25519 key", keys: [["kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": "AAAA"]],
                        reason: "key ed: kty must be EC (P-256, ES256) or RSA (RS256)"),
        BadRegistration("an encryption key", keys: [ecJWK(["use": "enc"])], reason: "key ec-1: use must be sig"),
        BadRegistration("an EC key for RS256", keys: [ecJWK(["alg": "RS256"])], reason: "key ec-1: alg must be ES256 for this kind of key"),
        BadRegistration("a P-384 key", keys: [ecJWK(["crv": "P-384"])], reason: "key ec-1: crv must be P-256"),
        BadRegistration("a short x", keys: [ecJWK(["x": "AAAA"])], reason: "key ec-1: x and y must each be 32 bytes of base64url"),
        BadRegistration("a point off the curve", keys: [ecJWK(["y": Data(repeating: 7, count: 32).base64URLEncodedString])],
                        reason: "key ec-1: the point is not on the P-256 curve"),
        BadRegistration("an RSA key of 1024 bits", keys: [rsaJWK(modulusBytes: 128)],
                        reason: "key rsa-1: RSA keys must have 2048 to 8192 bits, not 1024"),
        BadRegistration("an RSA key with an even exponent", keys: [rsaJWK(modulusBytes: 256, exponent: "AQAA")],
                        reason: "key rsa-1: n and e must be the base64url modulus and an odd public exponent"),
        BadRegistration("private_key_jwt without keys", fields: ["token_endpoint_auth_method": "private_key_jwt"], field: "jwks",
                        reason: "is required for the private_key_jwt authentication method"),
        BadRegistration("signed requests required without keys", fields: ["require_signed_request_object": true], field: "jwks",
                        reason: "is required when require_signed_request_object is true"),
        BadRegistration("an unknown authentication method", fields: ["token_endpoint_auth_method": "client_secret_jwt"],
                        field: "token_endpoint_auth_method",
                        reason: "must be client_secret_basic, client_secret_post, private_key_jwt or none"),
    ]

    @Test("every unusable key set or method is refused with the field and the reason", arguments: badRegistrations)
    func badRegistration(bad: BadRegistration) throws {
        let body = try JSONSerialization.data(withJSONObject: bad.fields)
        let fields = try JSONDecoder().decode(ClientRegistration.self, from: body)
        let client = Client(id: "cli_1", tenantID: "ten_1", name: "Bank", scopes: ["openid"], deliveryMode: .poll,
                            notificationEndpoint: nil, createdAt: Date(), updatedAt: Date())
        #expect(throws: AdminError.invalidField(bad.field, bad.reason)) { try fields.validated(client) }
    }

    @Test("a refused key set is a 400 naming the field and the key")
    func refusedOverHTTP() async throws {
        try await TestServer.routed { server in
            let answer = try await server.admin("POST", "/admin/v1/tenants/default/clients", json: [
                "name": "Bank", "token_endpoint_auth_method": "private_key_jwt", "jwks": ["keys": [Self.ecJWK(["crv": "P-521"])]],
            ])
            #expect(answer.status == 400)
            #expect(answer.errorDescription == "field jwks is invalid: key ec-1: crv must be P-256")
        }
    }

    @Test("a private_key_jwt client is created without a secret and shows only its public keys")
    func keyClientRegistration() async throws {
        try await TestServer.routed { server in
            let rsa = ClientSigningKey.rs256()
            let created = try await server.admin("POST", "/admin/v1/tenants/default/clients", json: [
                "name": "Bank", "token_endpoint_auth_method": "private_key_jwt", "require_signed_request_object": true,
                "backchannel_user_code_parameter": true, "jwks": ["keys": [Self.ecJWK(["use": "sig"]), rsa.publicJWK]],
            ])
            #expect(created.status == 201, "\(created.errorDescription ?? "")")
            #expect(created["client_secret"] == nil)
            let client = try #require(created["client"] as? [String: any Sendable])
            let id = try #require(client["client_id"] as? String)
            let shown = try await server.admin("GET", "/admin/v1/tenants/default/clients/\(id)")
            #expect(shown["token_endpoint_auth_method"] as? String == "private_key_jwt")
            #expect(shown["require_signed_request_object"] as? Bool == true)
            #expect(shown["backchannel_user_code_parameter"] as? Bool == true)
            let keys = try #require((shown["jwks"] as? [String: any Sendable])?["keys"] as? [[String: any Sendable]])
            #expect(keys.map { $0["kid"] as? String } == ["ec-1", "rsa-1"])
            #expect(keys.map { $0["alg"] as? String } == ["ES256", "RS256"])
            #expect(Set(keys[0].keys) == ["kty", "kid", "alg", "crv", "x", "y"])
            #expect(Set(keys[1].keys) == ["kty", "kid", "alg", "n", "e"])
        }
    }

    @Test("a secret client is created with token_endpoint_auth_method client_secret_basic and no keys")
    func defaultRegistration() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", "/admin/v1/tenants/default/clients", json: ["name": "Bank"])
            let client = try #require(created["client"] as? [String: any Sendable])
            #expect(client["token_endpoint_auth_method"] as? String == "client_secret_basic")
            #expect(client["jwks"] == nil)
            #expect(client["require_signed_request_object"] as? Bool == false)
            #expect(client["backchannel_user_code_parameter"] as? Bool == false)
            #expect((created["client_secret"] as? String)?.hasPrefix("css_") == true)
        }
    }

    @Test("an empty key set removes a secret client's keys but is refused for a private_key_jwt client")
    func removingKeys() async throws {
        try await TestServer.routed { server in
            let keyClient = try await server.keyClient()
            let refused = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(keyClient.id)", json: ["jwks": ["keys": [String]()]])
            #expect(refused.status == 400)
            #expect(refused.errorDescription == "field jwks is invalid: is required for the private_key_jwt authentication method")
            let secretClient = try await server.keyClient(method: "client_secret_basic")
            let removed = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(secretClient.id)", json: ["jwks": ["keys": [String]()]])
            #expect(removed.status == 200)
            #expect(removed["jwks"] == nil)
        }
    }

    /// Values of `id_token_signed_response_alg` that are not ES256 or RS256, as raw JSON, and
    /// the reason of their 400.
    static let badAlgorithms: [(json: String, reason: String)] = [
        (#""HS256""#, "field id_token_signed_response_alg is invalid: must be ES256 or RS256"),
        (#""none""#, "field id_token_signed_response_alg is invalid: must be ES256 or RS256"),
        (#""rs256""#, "field id_token_signed_response_alg is invalid: must be ES256 or RS256"),
        (#""PS256""#, "field id_token_signed_response_alg is invalid: must be ES256 or RS256"),
        (#""""#, "field id_token_signed_response_alg is invalid: must be ES256 or RS256"),
        ("null", "field id_token_signed_response_alg is invalid: must be ES256 or RS256"),
        ("256", "field id_token_signed_response_alg has the wrong type"),
        (#"["RS256"]"#, "field id_token_signed_response_alg has the wrong type"),
    ]

    @Test("an id_token_signed_response_alg other than ES256 or RS256 is a 400 naming the field, and changes nothing")
    func badTokenSigningAlgorithm() async throws {
        try await TestServer.routed { server in
            let existing = try await server.createClient(name: "Bank")
            let path = "/admin/v1/tenants/default/clients"
            for bad in Self.badAlgorithms {
                let created = try await server.call(
                    "POST", path, key: server.adminKey, body: Data(#"{"name":"Other","id_token_signed_response_alg":\#(bad.json)}"#.utf8))
                #expect(created.status == 400, "\(bad.json)")
                #expect(created.error == "invalid_request", "\(bad.json)")
                #expect(created.errorDescription == bad.reason, "\(bad.json)")
                let updated = try await server.call(
                    "PATCH", path + "/\(existing.id)", key: server.adminKey,
                    body: Data(#"{"name":"Renamed","id_token_signed_response_alg":\#(bad.json)}"#.utf8))
                #expect(updated.status == 400, "\(bad.json)")
                #expect(updated.errorDescription == bad.reason, "\(bad.json)")
            }
            let listed = try await server.admin("GET", path)
            let clients = try #require(listed["items"] as? [[String: any Sendable]],
                                       "\(String(decoding: listed.data, as: UTF8.self))")
            #expect(clients.map { $0["name"] as? String } == ["Bank"], "no client was created or renamed")
            #expect(clients.first?["id_token_signed_response_alg"] as? String == "ES256")
        }
    }

    @Test("id_token_signed_response_alg is ES256 unless set; create, update and show state it")
    func tokenSigningAlgorithmRegistration() async throws {
        try await TestServer.routed { server in
            let path = "/admin/v1/tenants/default/clients"
            let plain = try await server.admin("POST", path, json: ["name": "Bank"])
            #expect((plain["client"] as? [String: any Sendable])?["id_token_signed_response_alg"] as? String == "ES256")
            let created = try await server.admin("POST", path, json: ["name": "Portal", "id_token_signed_response_alg": "RS256"])
            #expect(created.status == 201)
            let client = try #require(created["client"] as? [String: any Sendable])
            #expect(client["id_token_signed_response_alg"] as? String == "RS256")
            let id = try #require(client["client_id"] as? String)
            #expect(try await server.admin("GET", "\(path)/\(id)")["id_token_signed_response_alg"] as? String == "RS256")
            let renamed = try await server.admin("PATCH", "\(path)/\(id)", json: ["name": "Portal 2"])
            #expect(renamed["id_token_signed_response_alg"] as? String == "RS256", "a PATCH without the field keeps it")
            let back = try await server.admin("PATCH", "\(path)/\(id)", json: ["id_token_signed_response_alg": "ES256"])
            #expect(back.status == 200)
            #expect(try await server.admin("GET", "\(path)/\(id)")["id_token_signed_response_alg"] as? String == "ES256")
        }
    }

    @Test("countersign admin client create and update set id_token_signed_response_alg",
          .enabled(if: CommandLineTests.executable != nil))
    func commandLineTokenSigningAlgorithm() async throws {
        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            let created = try await CommandLineTests.run(
                ["admin", "client", "create", "--name", "Portal", "--id-token-signed-response-alg", "RS256"], environment: environment)
            #expect(created.status == 0, "\(created.output)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any])
            let client = try #require(object["client"] as? [String: Any])
            #expect(client["id_token_signed_response_alg"] as? String == "RS256")
            let id = try #require(client["client_id"] as? String)
            let refused = try await CommandLineTests.run(
                ["admin", "client", "update", id, "--id-token-signed-response-alg", "HS256"], environment: environment)
            #expect(refused.status != 0)
            #expect(refused.output.contains("field id_token_signed_response_alg is invalid: must be ES256 or RS256"), "\(refused.output)")
            let updated = try await CommandLineTests.run(
                ["admin", "client", "update", id, "--id-token-signed-response-alg", "ES256"], environment: environment)
            #expect(updated.status == 0, "\(updated.output)")
            #expect(try await server.admin("GET", "/admin/v1/tenants/default/clients/\(id)")["id_token_signed_response_alg"] as? String
                == "ES256")
        }
    }

    @Test("countersign admin client create and update set the method, the keys and the request flags",
          .enabled(if: CommandLineTests.executable != nil))
    func commandLineFlags() async throws {
        try await TestServer.with(.sqlite) { server in
            let file = server.scratch.directory.appendingPathComponent("jwks.json")
            try JSONSerialization.data(withJSONObject: ["keys": [Self.ecJWK()]]).write(to: file)
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            let created = try await CommandLineTests.run(
                ["admin", "client", "create", "--name", "Bank", "--auth-method", "private_key_jwt", "--jwks-file", file.path,
                 "--require-signed-requests", "--user-code-parameter"], environment: environment)
            #expect(created.status == 0, "\(created.output)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any])
            let client = try #require(object["client"] as? [String: Any])
            #expect(client["token_endpoint_auth_method"] as? String == "private_key_jwt")
            #expect(client["require_signed_request_object"] as? Bool == true)
            #expect(client["backchannel_user_code_parameter"] as? Bool == true)
            let id = try #require(client["client_id"] as? String)
            let updated = try await CommandLineTests.run(
                ["admin", "client", "update", id, "--no-require-signed-requests", "--no-user-code-parameter"], environment: environment)
            #expect(updated.status == 0, "\(updated.output)")
            let shown = try await server.admin("GET", "/admin/v1/tenants/default/clients/\(id)")
            #expect(shown["require_signed_request_object"] as? Bool == false)
            #expect(shown["backchannel_user_code_parameter"] as? Bool == false)
        }
    }
}
