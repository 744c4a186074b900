import CountersignCore
import Crypto
import Foundation
import Testing
import _CryptoExtras
@testable import CountersignServer

/// A relying party's signing key, as the relying party holds it: signs client assertions,
/// signed requests and login hint tokens, and gives the public JWK to register.
struct ClientSigningKey: Sendable {
    enum Material: Sendable {
        case es256(P256.Signing.PrivateKey)
        case rs256(_RSA.Signing.PrivateKey)
    }

    let kid: String
    let material: Material

    static func es256(kid: String = "ec-1") -> ClientSigningKey {
        ClientSigningKey(kid: kid, material: .es256(P256.Signing.PrivateKey()))
    }

    /// RSA key generation is slow; the tests share one 2048-bit key per process.
    static let sharedRSA: _RSA.Signing.PrivateKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    static func rs256(kid: String = "rsa-1") -> ClientSigningKey {
        ClientSigningKey(kid: kid, material: .rs256(sharedRSA))
    }

    var alg: String {
        switch material {
        case .es256: "ES256"
        case .rs256: "RS256"
        }
    }

    /// The public JWK, as an administrator uploads it.
    var publicJWK: [String: any Sendable] {
        switch material {
        case .es256(let key):
            let jwk = ECPublicJWK(key.publicKey)
            return ["kty": "EC", "crv": "P-256", "x": jwk.x, "y": jwk.y, "kid": kid, "alg": "ES256", "use": "sig"]
        case .rs256(let key):
            let primitives = try! key.publicKey.getKeyPrimitives()
            return ["kty": "RSA", "n": primitives.modulus.base64URLEncodedString,
                    "e": primitives.publicExponent.base64URLEncodedString, "kid": kid, "alg": "RS256"]
        }
    }

    func signature(for input: Data) throws -> Data {
        switch material {
        case .es256(let key): try key.signature(for: input).rawRepresentation
        case .rs256(let key): try key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
        }
    }

    /// A compact JWS of `claims`, with this key's `alg` and `kid` unless `header` says otherwise.
    func jwt(_ claims: [String: JSONValue], header: [String: JSONValue] = [:]) throws -> String {
        var fields: [String: JSONValue] = ["alg": .string(alg), "kid": .string(kid), "typ": .string("JWT")]
        fields.merge(header) { $1 }
        let input = JSONValue.object(fields).canonicalData.base64URLEncodedString + "." + JSONValue.object(claims).canonicalData
            .base64URLEncodedString
        return input + "." + (try signature(for: Data(input.utf8))).base64URLEncodedString
    }

    /// An unsecured JWT (`alg` `none`, RFC 7519 §6): anyone can write one.
    static func unsigned(_ claims: [String: JSONValue]) -> String {
        JSONValue.object(["alg": .string("none"), "typ": .string("JWT")]).canonicalData.base64URLEncodedString + "."
            + JSONValue.object(claims).canonicalData.base64URLEncodedString + "."
    }
}

/// A client registered with keys.
struct KeyClient: Sendable {
    let id: String
    /// Only for clients of a secret method.
    let secret: String?
    let key: ClientSigningKey

    /// Its secret credentials; a `private_key_jwt` client has none.
    var basic: TestClient {
        get throws { try #require(secret.map { TestClient(id: id, secret: $0) }, "\(id) has no secret") }
    }
}

extension TestServer {
    /// Registers a client with `fields` beside its name; expects success.
    func registerClient(_ fields: [String: any Sendable], tenant: String = "default") async throws -> (id: String, secret: String?) {
        var body = fields
        body["name"] = body["name"] ?? "Signing bank"
        let answer = try await admin("POST", "/admin/v1/tenants/\(tenant)/clients", json: body)
        #expect(answer.status == 201, "client: \(answer.errorDescription ?? "")")
        let client = try #require(answer["client"] as? [String: any Sendable])
        return (try #require(client["client_id"] as? String), answer["client_secret"] as? String)
    }

    /// A client that registered `key`, authenticating with `method`.
    func keyClient(_ key: ClientSigningKey = .es256(), method: String = "private_key_jwt",
                   extra: [String: any Sendable] = [:]) async throws -> KeyClient {
        var fields = extra
        fields["token_endpoint_auth_method"] = method
        fields["jwks"] = ["keys": [key.publicJWK]]
        let (id, secret) = try await registerClient(fields)
        return KeyClient(id: id, secret: secret, key: key)
    }

    /// Seconds since 1970 by the test clock, plus `offset`.
    func epoch(_ offset: TimeInterval = 0) -> JSONValue {
        .integer(Int64(clock.now.timeIntervalSince1970 + offset))
    }

    /// The claims of a valid client assertion of `clientID` for this server.
    func assertionClaims(_ clientID: String) -> [String: JSONValue] {
        ["iss": .string(clientID), "sub": .string(clientID), "aud": .string(base), "iat": epoch(), "exp": epoch(60),
         "jti": .string(UUID().uuidString)]
    }

    /// The form parameters of `private_key_jwt` with `assertion`.
    static func assertionParameters(_ assertion: String) -> [(String, String)] {
        [("client_assertion_type", ClientAssertion.type), ("client_assertion", assertion)]
    }

    /// A request to `path` authenticated with a fresh, valid assertion of `client`.
    func asClient(_ client: KeyClient, _ path: String, _ parameters: [(String, String)]) async throws -> Answer {
        let assertion = try client.key.jwt(assertionClaims(client.id))
        return try await rawForm(path, parameters + Self.assertionParameters(assertion))
    }
}
