import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// Which key checks a JWT, decided by Countersign before jwt-kit checks the signature. Given a
/// set of keys, jwt-kit would check a JWT without `kid`, or with one it does not hold, with its
/// default key; these tests pin the rules that keep that from happening.
@Suite("JWT key selection")
struct JWTKeySelectionTests {
    /// `token` with its header replaced by `header` and signed again with `key`: the claims are
    /// unchanged and the signature is good, only the header differs.
    static func resigned(_ token: String, header: [String: JSONValue], key: P256.Signing.PrivateKey) throws -> String {
        let payload = try #require(token.split(separator: ".").dropFirst().first)
        let input = JSONValue.object(header).canonicalData.base64URLEncodedString + "." + payload
        return input + "." + (try key.signature(for: Data(input.utf8))).rawRepresentation.base64URLEncodedString
    }

    /// The default tenant's ES256 key that signs tokens now.
    static func tenantKey(_ server: TestServer) async throws -> P256.Signing.PrivateKey {
        let tenant = try #require(try await server.tenants.resolve(slug: nil))
        guard case .es256(let key) = try await server.tokenSigningKeys.keySet(for: tenant).current(.es256).privateKey else {
            throw KeySelectionTestError.unexpected("the tenant's current ES256 key is not an EC key")
        }
        return key
    }

    /// A client JWT of `claims` signed with `key` and no `kid` in its header.
    static func withoutKeyID(_ claims: [String: JSONValue], key: ClientSigningKey) throws -> String {
        let header: [String: JSONValue] = ["alg": .string(key.alg), "typ": .string("JWT")]
        let input = JSONValue.object(header).canonicalData.base64URLEncodedString + "." + JSONValue.object(claims).canonicalData
            .base64URLEncodedString
        return input + "." + (try key.signature(for: Data(input.utf8))).base64URLEncodedString
    }

    @Test("an access token without kid is refused at UserInfo, though the tenant's current key signed it")
    func accessTokenWithoutKeyID() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let token = try await server.approvedTokens(client, user: alice, scope: "openid").string("access_token")
            let key = try await Self.tenantKey(server)
            let encodedHeader = try #require(token.split(separator: ".").first)
            let header = try JSONValue(parsing: try #require(Data(base64URLEncoded: encodedHeader)))
            guard case .object(var fields) = header else { throw KeySelectionTestError.unexpected("the header is not an object") }
            #expect(try await server.userInfo(try Self.resigned(token, header: fields, key: key)).status == 200,
                    "signed again with its kid, the token is still good")
            fields["kid"] = nil
            let answer = try await server.userInfo(try Self.resigned(token, header: fields, key: key))
            #expect(answer.status == 401)
            #expect(answer.error == "invalid_token")
        }
    }

    @Test("an id_token_hint without kid is not signed by a key of this issuer")
    func idTokenHintWithoutKeyID() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            let idToken = try await HintIDTokenTests.idToken(server, client: client, alice: alice)
            let hint = try Self.resigned(idToken, header: ["alg": .string("ES256"), "typ": .string("JWT")], key: try await Self.tenantKey(server))
            let answer = try await server.bcAuthorize(client, [("scope", "openid"), ("id_token_hint", hint)])
            #expect(answer.status == 400)
            #expect(answer.errorDescription == "id_token_hint is not signed by a key of this issuer")
        }
    }

    @Test("a client assertion without kid is checked with the client's one key of its algorithm",
          arguments: ["ES256", "RS256"])
    func assertionWithoutKeyIDAndOneKey(alg: String) async throws {
        try await TestServer.routed { server in
            let client = try await server.keyClient(alg == "ES256" ? .es256() : .rs256())
            _ = try await server.enrolledUser("alice")
            let assertion = try Self.withoutKeyID(server.assertionClaims(client.id), key: client.key)
            let answer = try await server.rawForm(
                "/bc-authorize", ClientAuthPrivateKeyJWTTests.start + TestServer.assertionParameters(assertion))
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        }
    }

    @Test("a client assertion without kid is refused when the client has two keys of its algorithm, even signed by one of them")
    func assertionWithoutKeyIDAndTwoKeys() async throws {
        try await TestServer.routed { server in
            let first = ClientSigningKey.es256(kid: "ec-1")
            let second = ClientSigningKey.es256(kid: "ec-2")
            let (id, _) = try await server.registerClient(
                ["token_endpoint_auth_method": "private_key_jwt", "jwks": ["keys": [first.publicJWK, second.publicJWK]]])
            _ = try await server.enrolledUser("alice")
            for key in [first, second] {
                let assertion = try Self.withoutKeyID(server.assertionClaims(id), key: key)
                let answer = try await server.rawForm(
                    "/bc-authorize", ClientAuthPrivateKeyJWTTests.start + TestServer.assertionParameters(assertion))
                #expect(answer.status == 401, "signed by \(key.kid)")
                #expect(answer.errorDescription == ClientAuthPrivateKeyJWTTests.unknownKey, "signed by \(key.kid)")
            }
            let named = try second.jwt(server.assertionClaims(id))
            let answer = try await server.rawForm(
                "/bc-authorize", ClientAuthPrivateKeyJWTTests.start + TestServer.assertionParameters(named))
            #expect(answer.status == 200, "with its kid: \(answer.errorDescription ?? "")")
        }
    }
}

private enum KeySelectionTestError: Error {
    case unexpected(String)
}
