import CountersignCore
import Crypto
import Foundation
import Testing
import _CryptoExtras
@testable import CountersignServer

/// OpenID Provider metadata, the JWKS, and the token-signing keys behind them.
@Suite("Discovery and token-signing keys")
struct DiscoveryTests {
    @Test("the discovery document describes the CIBA provider at the issuer")
    func discoveryDocument() async throws {
        try await TestServer.routed { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            for (path, issuer) in [("", server.base), ("/t/acme", server.base + "/t/acme")] {
                let answer = try await server.call("GET", "\(path)/.well-known/openid-configuration")
                #expect(answer.status == 200)
                #expect(answer.header("Content-Type") == "application/json")
                #expect(answer.header("Cache-Control") == "public, max-age=300")
                #expect(answer["issuer"] as? String == issuer)
                #expect(answer["jwks_uri"] as? String == issuer + "/jwks")
                #expect(answer["token_endpoint"] as? String == issuer + "/token")
                #expect(answer["backchannel_authentication_endpoint"] as? String == issuer + "/bc-authorize")
                #expect(answer["countersign_approval_receipt_endpoint"] as? String == issuer + "/bc-authorize/receipt")
                #expect(answer["backchannel_token_delivery_modes_supported"] as? [String] == ["poll", "ping", "push"])
                #expect(answer["backchannel_user_code_parameter_supported"] as? Bool == true)
                #expect(answer["grant_types_supported"] as? [String]
                    == ["authorization_code", "urn:openid:params:grant-type:ciba", "refresh_token"])
                #expect(answer["token_endpoint_auth_methods_supported"] as? [String]
                    == ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"])
                #expect(answer["id_token_signing_alg_values_supported"] as? [String] == ["ES256", "RS256"])
                #expect(answer["scopes_supported"] as? [String] == ["openid", "offline_access", "profile"])
                #expect(answer["subject_types_supported"] as? [String] == ["public"])
                #expect(answer["acr_values_supported"] as? [String] == [
                    "urn:countersign:acr:confirm", "urn:countersign:acr:number-match", "urn:countersign:acr:pin",
                    "urn:countersign:acr:biometric", "urn:countersign:acr:custom", "urn:countersign:acr:passkey",
                ])
                let claims = Set(try #require(answer["claims_supported"] as? [String]))
                #expect(claims.isSuperset(of: ["sub", "iss", "aud", "exp", "iat", "auth_time", "acr", "amr"]))
                #expect(answer["backchannel_authentication_request_signing_alg_values_supported"] as? [String] == ["ES256", "RS256"])
                #expect(answer["request_parameter_supported"] as? Bool == false)
                // The code flow (OpenID Connect Discovery §3's REQUIRED members among them).
                #expect(answer["authorization_endpoint"] as? String == issuer + "/authorize")
                #expect(answer["pushed_authorization_request_endpoint"] as? String == issuer + "/par")
                #expect(answer["end_session_endpoint"] as? String == issuer + "/logout")
                #expect(answer["response_types_supported"] as? [String] == ["code"])
                #expect(answer["response_modes_supported"] as? [String] == ["query"])
                #expect(answer["code_challenge_methods_supported"] as? [String] == ["S256"])
                #expect(answer["authorization_response_iss_parameter_supported"] as? Bool == true)
                #expect(answer["prompt_values_supported"] as? [String] == ["none", "login", "consent", "select_account"])
            }
        }
    }

    @Test("the default tenant's document is at its issuer only, never below /t/default")
    func defaultTenantDocumentOnlyAtItsIssuer() async throws {
        try await TestServer.routed { server in
            let alias = try await server.call("GET", "/t/default/.well-known/openid-configuration")
            #expect(alias.status == 404)
            #expect(alias.error == "not_found")
            #expect(alias.errorDescription == "the default tenant's issuer is \(server.base); its metadata is at \(server.base)/.well-known/openid-configuration")
            let root = try await server.call("GET", "/.well-known/openid-configuration")
            #expect(root["issuer"] as? String == server.base)
        }
    }

    @Test("an unknown tenant has no discovery document and no JWKS")
    func unknownTenant() async throws {
        try await TestServer.routed { server in
            let discovery = try await server.call("GET", "/t/nowhere/.well-known/openid-configuration")
            #expect(discovery.status == 404)
            let jwks = try await server.call("GET", "/t/nowhere/jwks")
            #expect(jwks.status == 404)
        }
    }

    @Test("the JWKS publishes one ES256 and one RS256 signature key per tenant, each named by its thumbprint")
    func jwksShape() async throws {
        try await TestServer.routed { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            var kids: [String] = []
            for path in ["/jwks", "/t/acme/jwks"] {
                let answer = try await server.call("GET", path)
                #expect(answer.status == 200)
                #expect(answer.header("Cache-Control") == "public, max-age=300")
                let keys = try #require(answer["keys"] as? [[String: any Sendable]])
                #expect(keys.map { $0["alg"] as? String } == ["ES256", "RS256"])
                let ec = try #require(keys.first)
                #expect(Set(ec.keys) == ["kty", "crv", "x", "y", "kid", "use", "alg"])
                #expect(ec["kty"] as? String == "EC")
                #expect(ec["crv"] as? String == "P-256")
                #expect(ec["use"] as? String == "sig")
                let jwk = try JSONDecoder().decode(ECPublicJWK.self, from: JSONSerialization.data(withJSONObject: ec))
                _ = try jwk.signingKey()
                #expect(ec["kid"] as? String == jwk.thumbprint)

                let rsa = try #require(keys.last)
                #expect(Set(rsa.keys) == ["kty", "n", "e", "kid", "use", "alg"])
                #expect(rsa["kty"] as? String == "RSA")
                #expect(rsa["use"] as? String == "sig")
                let n = try #require(rsa["n"] as? String)
                let e = try #require(rsa["e"] as? String)
                let modulus = try #require(Data(base64URLEncoded: n))
                #expect(modulus.first.map { $0 >= 0x80 } == true, "n has no leading zero octet and 2048 full bits")
                #expect(modulus.count * 8 >= 2048)
                #expect(e == "AQAB", "e is 65537 in its minimal octets")
                // RFC 7638 §3.2: the required members e, kty, n in order, no whitespace.
                let members = Data(#"{"e":"\#(e)","kty":"RSA","n":"\#(n)"}"#.utf8)
                #expect(rsa["kid"] as? String == Data(SHA256.hash(data: members)).base64URLEncodedString)
                #expect(try await server.rsaJWKS(path: path).count == 1, "n and e make a usable RSA key")

                kids += [jwk.thumbprint, try #require(rsa["kid"] as? String)]
                let again = try await server.call("GET", path)
                #expect((again["keys"] as? [[String: any Sendable]])?.compactMap { $0["kid"] as? String } == Array(kids.suffix(2)))
            }
            #expect(Set(kids).count == 4, "each tenant has its own keys")
        }
    }

    @Test("nodes creating a tenant's first keys at once agree on one key per algorithm, each sealed to its row", arguments: Engine.available)
    func concurrentFirstUse(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let tenant = try #require(try await server.tenants.resolve(slug: nil))
            let nodes = (0..<4).map { _ in
                TokenSigningKeys(
                    store: SQLTokenSigningKeyStore(database: server.database), sealer: server.sealer, now: server.clock.function)
            }
            let kids = try await withThrowingTaskGroup(of: [String].self) { group in
                for node in nodes {
                    group.addTask {
                        let keys = try await node.keySet(for: tenant)
                        return [try keys.current(.es256).id, try keys.current(.rs256).id]
                    }
                }
                return try await group.reduce(into: Set<[String]>()) { $0.insert($1) }
            }
            #expect(kids.count == 1)
            let stored = try await SQLTokenSigningKeyRepository().published(tenantID: tenant.id, on: server.database)
            #expect([stored.map(\.id)] == Array(kids))
            #expect(stored.map(\.algorithm) == [.es256, .rs256])
            for row in stored {
                #expect(row.publicKey.thumbprint == row.id)
                #expect(throws: SealingError.self) {
                    try server.sealer.open(row.sealedKey, context: TokenSigningKeys.sealingContext("ten_other", row.id))
                }
                let opened = try server.sealer.open(row.sealedKey, context: TokenSigningKeys.sealingContext(tenant.id, row.id))
                switch row.publicKey {
                case .ec: #expect(opened.count == 32)
                case .rsa: #expect(try _RSA.Signing.PrivateKey(derRepresentation: opened).keySizeInBits == 2048)
                }
            }
        }
    }

    @Test("a rotated-in key is published at once but signs only after the JWKS cache time")
    func rotationActivation() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func key(_ name: String, at date: Date) -> TokenSigningKey {
            let privateKey = P256.Signing.PrivateKey()
            return TokenSigningKey(id: name, publicKey: .ec(ECPublicJWK(privateKey.publicKey)), privateKey: .es256(privateKey),
                                   createdAt: date)
        }
        let old = key("old", at: start)
        let new = key("new", at: start.addingTimeInterval(86_400))
        #expect(TokenSigningKeys.current(of: [old], at: start)?.id == "old")
        #expect(TokenSigningKeys.current(of: [old, new], at: start.addingTimeInterval(86_400 + 299))?.id == "old")
        #expect(TokenSigningKeys.current(of: [old, new], at: start.addingTimeInterval(86_400 + 300))?.id == "new")
    }
}
