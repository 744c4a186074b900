import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// OpenID Provider metadata, the JWKS, and the token-signing keys behind them.
@Suite("Discovery and token-signing keys")
struct DiscoveryTests {
    @Test("the discovery document describes the CIBA provider at the issuer", arguments: Engine.available)
    func discoveryDocument(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
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
                #expect(answer["grant_types_supported"] as? [String] == ["urn:openid:params:grant-type:ciba", "refresh_token"])
                #expect(answer["token_endpoint_auth_methods_supported"] as? [String]
                    == ["client_secret_basic", "client_secret_post", "private_key_jwt"])
                #expect(answer["id_token_signing_alg_values_supported"] as? [String] == ["ES256"])
                #expect(answer["scopes_supported"] as? [String] == ["openid", "offline_access", "profile"])
                #expect(answer["subject_types_supported"] as? [String] == ["public"])
                #expect(answer["acr_values_supported"] as? [String] == [
                    "urn:countersign:acr:confirm", "urn:countersign:acr:number-match", "urn:countersign:acr:pin",
                    "urn:countersign:acr:biometric", "urn:countersign:acr:custom",
                ])
                let claims = Set(try #require(answer["claims_supported"] as? [String]))
                #expect(claims.isSuperset(of: ["sub", "iss", "aud", "exp", "iat", "auth_time", "acr", "amr"]))
                #expect(answer["backchannel_authentication_request_signing_alg_values_supported"] as? [String] == ["ES256", "RS256"])
                #expect(answer["request_parameter_supported"] as? Bool == true)
                #expect(answer["authorization_endpoint"] == nil)
            }
        }
    }

    @Test("the default tenant's document is at its issuer only, never below /t/default", arguments: Engine.available)
    func defaultTenantDocumentOnlyAtItsIssuer(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let alias = try await server.call("GET", "/t/default/.well-known/openid-configuration")
            #expect(alias.status == 404)
            #expect(alias.error == "not_found")
            #expect(alias.errorDescription == "the default tenant's issuer is \(server.base); its metadata is at \(server.base)/.well-known/openid-configuration")
            let root = try await server.call("GET", "/.well-known/openid-configuration")
            #expect(root["issuer"] as? String == server.base)
        }
    }

    @Test("an unknown tenant has no discovery document and no JWKS", arguments: Engine.available)
    func unknownTenant(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let discovery = try await server.call("GET", "/t/nowhere/.well-known/openid-configuration")
            #expect(discovery.status == 404)
            let jwks = try await server.call("GET", "/t/nowhere/jwks")
            #expect(jwks.status == 404)
        }
    }

    @Test("the JWKS publishes one ES256 signature key per tenant, named by its thumbprint", arguments: Engine.available)
    func jwksShape(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            var kids: [String] = []
            for path in ["/jwks", "/t/acme/jwks"] {
                let answer = try await server.call("GET", path)
                #expect(answer.status == 200)
                #expect(answer.header("Cache-Control") == "public, max-age=300")
                let keys = try #require(answer["keys"] as? [[String: any Sendable]])
                #expect(keys.count == 1)
                let key = try #require(keys.first)
                #expect(Set(key.keys) == ["kty", "crv", "x", "y", "kid", "use", "alg"])
                #expect(key["kty"] as? String == "EC")
                #expect(key["crv"] as? String == "P-256")
                #expect(key["use"] as? String == "sig")
                #expect(key["alg"] as? String == "ES256")
                let jwk = try JSONDecoder().decode(ECPublicJWK.self, from: JSONSerialization.data(withJSONObject: key))
                _ = try jwk.signingKey()
                #expect(key["kid"] as? String == jwk.thumbprint)
                kids.append(jwk.thumbprint)
                let again = try await server.call("GET", path)
                #expect((again["keys"] as? [[String: any Sendable]])?.first?["kid"] as? String == jwk.thumbprint)
            }
            #expect(kids[0] != kids[1], "each tenant has its own key")
        }
    }

    @Test("nodes creating a tenant's first key at once agree on one key, sealed to its row", arguments: Engine.available)
    func concurrentFirstUse(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let services = server.services
            let tenant = try #require(try await services.tenantService.resolve(slug: nil))
            let nodes = (0..<4).map { _ in
                TokenSigningKeys(database: services.database, repository: services.repositories.tokenSigningKeys,
                                 sealer: services.sealer, now: server.clock.function)
            }
            let kids = try await withThrowingTaskGroup(of: String.self) { group in
                for node in nodes { group.addTask { try await node.keySet(for: tenant).current.id } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(kids.count == 1)
            let stored = try await services.repositories.tokenSigningKeys.published(tenantID: tenant.id, on: services.database)
            #expect(stored.map(\.id) == Array(kids))
            let row = try #require(stored.first)
            #expect(row.publicKey.thumbprint == row.id)
            #expect(throws: SealingError.self) {
                try services.sealer.open(row.sealedKey, context: TokenSigningKeys.sealingContext("ten_other", row.id))
            }
            #expect(try services.sealer.open(row.sealedKey, context: TokenSigningKeys.sealingContext(tenant.id, row.id)).count == 32)
        }
    }

    @Test("a rotated-in key is published at once but signs only after the JWKS cache time")
    func rotationActivation() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func key(_ name: String, at date: Date) -> TokenSigningKey {
            let privateKey = P256.Signing.PrivateKey()
            return TokenSigningKey(id: name, publicKey: ECPublicJWK(privateKey.publicKey), privateKey: privateKey, createdAt: date)
        }
        let old = key("old", at: start)
        let new = key("new", at: start.addingTimeInterval(86_400))
        #expect(TokenSigningKeys.current(of: [old], at: start).id == "old")
        #expect(TokenSigningKeys.current(of: [old, new], at: start.addingTimeInterval(86_400 + 299)).id == "old")
        #expect(TokenSigningKeys.current(of: [old, new], at: start.addingTimeInterval(86_400 + 300)).id == "new")
    }
}
