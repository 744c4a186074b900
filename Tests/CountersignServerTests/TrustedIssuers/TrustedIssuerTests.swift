import CountersignCore
import CountersignKit
import Crypto
import Foundation
import Synchronization
import Testing
@testable import CountersignServer

/// Enrolling a phone with a token of the bank's own identity provider, which the tenant trusts
/// (`/admin/v1/tenants/{tenant}/trusted-issuers`): the provider's keys are fetched from its
/// `jwks_uri` (a local provider, `TestIdentityProvider`) or registered inline, its tokens are
/// checked as the issuer's, and the username claim names the Countersign user.
@Suite("Enrollment with a trusted issuer's token")
struct TrustedIssuerTests {
    /// The provider's current signing keys.
    static let es256 = ClientSigningKey.es256(kid: "idp-ec-1")
    static let rs256 = ClientSigningKey.rs256(kid: "idp-rsa-1")

    /// Trusts `provider` (by its URL) on `tenant`, with `fields` over the defaults.
    private func trust(_ server: TestServer, _ issuer: String, keys: [String: any Sendable], tenant: String = "default",
                       fields: [String: any Sendable] = [:]) async throws -> String {
        var body: [String: any Sendable] = ["issuer": issuer, "audience": "bank-app"]
        body.merge(keys) { $1 }
        body.merge(fields) { $1 }
        let answer = try await server.admin("POST", "/admin/v1/tenants/\(tenant)/trusted-issuers", json: body)
        #expect(answer.status == 201, "trusting \(issuer): \(answer.errorDescription ?? "")")
        return try #require(answer["id"] as? String)
    }

    /// Posts an enrollment request naming `token` (`ath`, unless another is given) with it as the
    /// bearer token, as the SDK does, but by hand so that every refusal can be read.
    private func enroll(_ server: TestServer, bearer token: String, tenant: String? = nil, ath: String? = nil) async throws
        -> TestServer.Answer {
        let prefix = tenant.map { "/t/\($0)" } ?? ""
        let signer = P256.Signing.PrivateKey()
        let request = EnrollmentRequest(
            ticket: nil, audience: server.base + prefix, issuedAt: Int64(server.clock.now.timeIntervalSince1970),
            deviceName: "Phone", platform: .android, signingKey: ECPublicJWK(signer.publicKey),
            encryptionKey: ECPublicJWK(P256.KeyAgreement.PrivateKey().publicKey), push: nil,
            accessTokenHash: ath ?? EnrollmentRequest.hash(accessToken: token))
        let jws = try CompactJWS.sign(
            header: ["typ": .string(EnrollmentRequest.type), "jwk": try JSONValue(encoding: ECPublicJWK(signer.publicKey))],
            payload: try JSONValue(encoding: request).canonicalData, signer: signer)
        return try await server.call(
            "POST", prefix + "/device/v1/enrollments",
            body: try JSONEncoder().encode(EnrollmentSubmission(enrollmentRequest: jws.serialized)),
            headers: ["Authorization": "Bearer \(token)"])
    }

    private func deviceCount(_ server: TestServer, user: String, tenant: String = "default") async throws -> Int {
        let devices = try await server.admin("GET", "/admin/v1/tenants/\(tenant)/users/\(user)/devices")
        return try #require(devices["items"] as? [[String: any Sendable]]).count
    }

    /// What the refusal of a token must be.
    private func expectRefusal(_ answer: TestServer.Answer, _ status: Int, _ error: String, _ description: String,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.status == status, sourceLocation: sourceLocation)
        #expect(answer.error == error, sourceLocation: sourceLocation)
        #expect(answer.errorDescription == description, sourceLocation: sourceLocation)
        if status == 401 {
            #expect(answer.header("WWW-Authenticate")?.hasPrefix("Bearer realm=\"countersign\", error=\"invalid_token\"") == true,
                    sourceLocation: sourceLocation)
        }
    }

    @Test("The SDK enrolls a phone with the provider's ES256 access token, keys fetched from its jwks_uri; the audit names the issuer",
          arguments: Engine.available)
    func enrollsWithTheProvidersToken(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            try await TestIdentityProvider.with(publishing: [Self.es256, Self.rs256]) { provider in
                let issuerID = try await trust(server, provider.issuer, keys: ["jwks_uri": provider.jwksURI])
                let userID = try await server.createUser("alice")
                let token = try provider.token("alice", signedBy: Self.es256, at: server.clock.now)
                let (kit, _) = server.authenticator()
                let enrollment = try await kit.enroll(
                    accessToken: token, server: try #require(URL(string: server.base)), deviceName: "Alice's phone",
                    platform: .ios)
                #expect(enrollment.user.id == userID)
                #expect(enrollment.user.username == "alice")
                #expect(try await deviceCount(server, user: userID) == 1)

                let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit")
                let enrolled = try #require((audit["items"] as? [[String: any Sendable]])?
                    .first { $0["action"] as? String == "device.enrolled" })
                let details = try #require(enrolled["details"] as? [String: any Sendable])
                #expect(details["trusted_issuer"] as? String == issuerID)
                #expect(details["issuer"] as? String == provider.issuer)
                #expect(details["user_id"] as? String == userID)
                #expect(details["ticket_id"] == nil && details["client_id"] == nil)
            }
        }
    }

    @Test("An RS256 ID token enrolls with inline keys, no scope required and the email claim as username")
    func idTokenWithInlineKeys() async throws {
        try await TestServer.routed { server in
            let issuer = "https://login.bank.example"
            _ = try await trust(server, issuer, keys: ["jwks": ["keys": [Self.rs256.publicJWK]]],
                                fields: ["username_claim": "email", "required_scope": "", "audience": "mobile-app"])
            let userID = try await server.createUser("alice@bank.example")
            let now = Int64(server.clock.now.timeIntervalSince1970)
            let idToken = try Self.rs256.jwt([
                "iss": .string(issuer), "sub": .string("248289761001"), "aud": .array([.string("mobile-app"), .string("other")]),
                "email": .string("alice@bank.example"), "iat": .integer(now), "exp": .integer(now + 300),
                "jti": .string(UUID().uuidString), "nonce": .string("n-0S6_WzA2Mj"),
            ])
            let answer = try await enroll(server, bearer: idToken)
            #expect(answer.status == 201, "\(answer.errorDescription ?? "")")
            #expect(try await deviceCount(server, user: userID) == 1)
        }
    }

    @Test("The scope may come as scp, an array, and the tenant may require a scope of its own")
    func scopeFromScp() async throws {
        try await TestServer.routed { server in
            let issuer = "https://login.bank.example"
            _ = try await trust(server, issuer, keys: ["jwks": ["keys": [Self.es256.publicJWK]]],
                                fields: ["required_scope": "phone:enroll"])
            let userID = try await server.createUser("alice")
            let now = Int64(server.clock.now.timeIntervalSince1970)
            func token(_ scope: [String: JSONValue]) throws -> String {
                var claims: [String: JSONValue] = [
                    "iss": .string(issuer), "aud": .string("bank-app"), "preferred_username": .string("alice"),
                    "exp": .integer(now + 300), "jti": .string(UUID().uuidString),
                ]
                claims.merge(scope) { $1 }
                return try Self.es256.jwt(claims)
            }
            let ownScope = try await enroll(server, bearer: try token(["scope": .string("openid countersign:enroll")]))
            expectRefusal(ownScope, 403, "insufficient_scope", "the access token must carry the scope phone:enroll")
            #expect(ownScope.header("WWW-Authenticate")?.contains("scope=\"phone:enroll\"") == true)
            let scp = try await enroll(server, bearer: try token(["scp": .array([.string("openid"), .string("phone:enroll")])]))
            #expect(scp.status == 201, "\(scp.errorDescription ?? "")")
            #expect(try await deviceCount(server, user: userID) == 1)
        }
    }

    /// A token that breaks one rule, and the exact refusal it gets.
    enum BadToken: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case wrongAudience, expired, notYetValid, issuedInFuture, noJTI, unknownUser, disabledUser, wrongSignature,
             scopeMissing, noUsernameClaim, algorithmHS256, unknownKeyID

        var testDescription: String { rawValue }
    }

    @Test("A token that breaks a rule is refused with that rule, and enrolls nothing", arguments: BadToken.allCases)
    func refusals(bad: BadToken) async throws {
        try await TestServer.routed { server in
            let issuer = "https://login.bank.example"
            _ = try await trust(server, issuer, keys: ["jwks": ["keys": [Self.es256.publicJWK]]])
            let alice = try await server.createUser("alice")
            let bob = try await server.createUser("bob")
            _ = try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(bob)", json: ["status": "disabled"])
            let now = Int64(server.clock.now.timeIntervalSince1970)
            var claims: [String: JSONValue] = [
                "iss": .string(issuer), "aud": .string("bank-app"), "preferred_username": .string("alice"),
                "iat": .integer(now), "exp": .integer(now + 600), "jti": .string(UUID().uuidString),
                "scope": .string("countersign:enroll"),
            ]
            var key = Self.es256
            var header: [String: JSONValue] = [:]
            let expected: (Int, String, String)
            switch bad {
            case .wrongAudience:
                claims["aud"] = .string("another-app")
                expected = (401, "invalid_token", "the token's aud does not name the audience this tenant expects from its issuer")
            case .expired:
                claims["exp"] = .integer(now - 61)
                expected = (401, "invalid_token", "the token has expired (exp)")
            case .notYetValid:
                claims["nbf"] = .integer(now + 61)
                expected = (401, "invalid_token", "the token is not valid yet (nbf)")
            case .issuedInFuture:
                claims["iat"] = .integer(now + 61)
                expected = (401, "invalid_token", "the token was issued in the future (iat)")
            case .noJTI:
                claims["jti"] = nil
                expected = (401, "invalid_token", "the token has no jti")
            case .unknownUser:
                claims["preferred_username"] = .string("mallory")
                expected = (403, "unknown_user", "the token's preferred_username names no user of this tenant")
            case .disabledUser:
                claims["preferred_username"] = .string("bob")
                expected = (403, "user_not_active", "the user the token names is not active")
            case .wrongSignature:
                key = .es256(kid: Self.es256.kid)
                expected = (401, "invalid_token", "the token's signature does not verify with its issuer's key")
            case .scopeMissing:
                claims["scope"] = .string("openid profile")
                expected = (403, "insufficient_scope", "the access token must carry the scope countersign:enroll")
            case .noUsernameClaim:
                claims["preferred_username"] = nil
                expected = (401, "invalid_token", "the token has no preferred_username")
            case .algorithmHS256:
                header = ["alg": .string("HS256")]
                expected = (401, "invalid_token", "the token is signed with HS256; a trusted issuer's tokens must be ES256 or RS256")
            case .unknownKeyID:
                header = ["kid": .string("idp-ec-2")]
                expected = (401, "invalid_token", "the token is not signed with a key of its issuer (kid, alg)")
            }
            let answer = try await enroll(server, bearer: try key.jwt(claims, header: header))
            expectRefusal(answer, expected.0, expected.1, expected.2)
            #expect(try await deviceCount(server, user: alice) == 0)
            #expect(try await deviceCount(server, user: bob) == 0)
        }
    }

    @Test("Each jti enrolls one phone: the same token, or another with its jti, is refused")
    func jtiIsSingleUse() async throws {
        try await TestServer.routed { server in
            let issuer = "https://login.bank.example"
            _ = try await trust(server, issuer, keys: ["jwks": ["keys": [Self.es256.publicJWK]]])
            let alice = try await server.createUser("alice")
            let now = Int64(server.clock.now.timeIntervalSince1970)
            let claims: [String: JSONValue] = [
                "iss": .string(issuer), "aud": .string("bank-app"), "preferred_username": .string("alice"),
                "exp": .integer(now + 600), "jti": .string("jti-1"), "scope": .string("countersign:enroll"),
            ]
            #expect(try await enroll(server, bearer: try Self.es256.jwt(claims)).status == 201)
            let used = "this access token has already enrolled a device; sign in again to enroll another"
            expectRefusal(try await enroll(server, bearer: try Self.es256.jwt(claims)), 400, "invalid_request", used)
            var again = claims
            again["iat"] = .integer(now)
            expectRefusal(try await enroll(server, bearer: try Self.es256.jwt(again)), 400, "invalid_request", used)
            #expect(try await deviceCount(server, user: alice) == 1)
        }
    }

    @Test("A token whose issuer another tenant trusts, or nobody does, is refused before its keys are fetched")
    func issuerOfAnotherTenant() async throws {
        try await TestServer.routed { server in
            try await TestIdentityProvider.with(publishing: [Self.es256]) { provider in
                let created = try await server.admin(
                    "POST", "/admin/v1/tenants", json: ["slug": "branch", "display_name": "Branch"])
                #expect(created.status == 201)
                _ = try await trust(server, provider.issuer, keys: ["jwks_uri": provider.jwksURI], tenant: "branch")
                let alice = try await server.createUser("alice")
                let branchAlice = try await server.createUser("alice", tenant: "branch")
                let token = try provider.token("alice", signedBy: Self.es256, at: server.clock.now)
                expectRefusal(try await enroll(server, bearer: token), 401, "invalid_token",
                              "the token's issuer is neither this tenant nor one it trusts")
                #expect(provider.fetches == 0)
                #expect(try await deviceCount(server, user: alice) == 0)

                let atBranch = try await enroll(server, bearer: token, tenant: "branch")
                #expect(atBranch.status == 201, "\(atBranch.errorDescription ?? "")")
                #expect(try await deviceCount(server, user: branchAlice, tenant: "branch") == 1)
            }
        }
    }

    @Test("Fetched keys are kept 5 minutes; an unknown kid fetches again at most every 30 s, which picks up a rotation")
    func keyCachingAndRotation() async throws {
        try await TestServer.routed { server in
            try await TestIdentityProvider.with(publishing: [Self.es256]) { provider in
                _ = try await trust(server, provider.issuer, keys: ["jwks_uri": provider.jwksURI])
                let alice = try await server.createUser("alice")
                let rotated = ClientSigningKey.es256(kid: "idp-ec-2")
                func enrollAlice(_ key: ClientSigningKey) async throws -> TestServer.Answer {
                    try await enroll(server, bearer: try provider.token("alice", signedBy: key, at: server.clock.now))
                }
                let unknownKey = "the token is not signed with a key of its issuer (kid, alg)"

                #expect(try await enrollAlice(Self.es256).status == 201)
                #expect(try await enrollAlice(Self.es256).status == 201)
                #expect(provider.fetches == 1)

                // The provider rotates; a token with the new kid within 30 s of the fetch finds
                // the cached set without it.
                provider.publish([Self.es256, rotated])
                expectRefusal(try await enrollAlice(rotated), 401, "invalid_token", unknownKey)
                #expect(provider.fetches == 1)
                server.clock.advance(by: 31)
                #expect(try await enrollAlice(rotated).status == 201)
                #expect(provider.fetches == 2)

                // A kid nobody published: one fetch, then none for 30 s.
                let invented = ClientSigningKey.es256(kid: "invented")
                server.clock.advance(by: 31)
                expectRefusal(try await enrollAlice(invented), 401, "invalid_token", unknownKey)
                expectRefusal(try await enrollAlice(invented), 401, "invalid_token", unknownKey)
                #expect(provider.fetches == 3)

                // Past 5 minutes the set is fetched again, even for a known kid.
                server.clock.advance(by: 300)
                #expect(try await enrollAlice(Self.es256).status == 201)
                #expect(provider.fetches == 4)
                #expect(try await deviceCount(server, user: alice) == 4)
            }
        }
    }

    @Test("A JWKS endpoint that fails is a 401 that says the keys could not be fetched, logged, retried after 30 s")
    func keysEndpointDown() async throws {
        let capture = LogCapture()
        try await TestServer.routed(logger: capture.logger()) { server in
            try await TestIdentityProvider.with(publishing: [Self.es256]) { provider in
                _ = try await trust(server, provider.issuer, keys: ["jwks_uri": provider.jwksURI])
                let alice = try await server.createUser("alice")
                provider.setDown(true)
                let token = try provider.token("alice", signedBy: Self.es256, at: server.clock.now)
                expectRefusal(try await enroll(server, bearer: token), 401, "invalid_token", "the issuer's keys could not be fetched")
                #expect(capture.logged(atLeast: .warning).contains {
                    $0.message.contains("the keys of a trusted issuer could not be fetched")
                        && $0.message.contains("HTTP 503") && $0.message.contains(provider.issuer)
                })
                // The failure is remembered: the provider is not asked again at once.
                provider.setDown(false)
                expectRefusal(try await enroll(server, bearer: token), 401, "invalid_token", "the issuer's keys could not be fetched")
                #expect(provider.fetches == 1)
                server.clock.advance(by: 31)
                #expect(try await enroll(server, bearer: token).status == 201)
                #expect(try await deviceCount(server, user: alice) == 1)
            }
        }
    }

    @Test("A published set with a private key, or with no key Countersign can use, is refused whole and logged",
          arguments: [
              ([JSONValue.object(TrustedIssuerTests.es256.publicJWK.compactMapValues { ($0 as? String).map(JSONValue.string) }
                  .merging(["d": .string("AAAA")]) { $1 })], "the key set key idp-ec-1 holds the private member d"),
              ([TestIdentityProvider.encryptionKey], "the set holds no ES256 (P-256) or RS256 signing key with a kid"),
          ])
    func unusableKeySets(raw: [JSONValue], cause: String) async throws {
        let capture = LogCapture()
        try await TestServer.routed(logger: capture.logger()) { server in
            try await TestIdentityProvider.with(publishing: []) { provider in
                provider.publish([], raw: raw)
                _ = try await trust(server, provider.issuer, keys: ["jwks_uri": provider.jwksURI])
                let alice = try await server.createUser("alice")
                let token = try provider.token("alice", signedBy: Self.es256, at: server.clock.now)
                expectRefusal(try await enroll(server, bearer: token), 401, "invalid_token", "the issuer's keys could not be fetched")
                #expect(capture.logged(atLeast: .warning).contains { $0.message.contains(cause) })
                #expect(try await deviceCount(server, user: alice) == 0)
            }
        }
    }

    @Test("The proof must name the hash of the provider's token it is sent with")
    func athBindsTheProviderToken() async throws {
        try await TestServer.routed { server in
            let issuer = "https://login.bank.example"
            _ = try await trust(server, issuer, keys: ["jwks": ["keys": [Self.es256.publicJWK]]])
            let alice = try await server.createUser("alice")
            let now = Int64(server.clock.now.timeIntervalSince1970)
            func token() throws -> String {
                try Self.es256.jwt([
                    "iss": .string(issuer), "aud": .string("bank-app"), "preferred_username": .string("alice"),
                    "exp": .integer(now + 600), "jti": .string(UUID().uuidString), "scope": .string("countersign:enroll"),
                ])
            }
            let answer = try await enroll(server, bearer: try token(), ath: EnrollmentRequest.hash(accessToken: try token()))
            expectRefusal(answer, 400, "invalid_proof", "ath must be the base64url SHA-256 of the access token sent with the request")
            #expect(try await deviceCount(server, user: alice) == 0)
        }
    }

    @Test("A provider that no longer listens is a 401 too, never a 500")
    func keysEndpointGone() async throws {
        try await TestServer.routed { server in
            let provider = try await TestIdentityProvider.start(publishing: [Self.es256])
            _ = try await trust(server, provider.issuer, keys: ["jwks_uri": provider.jwksURI])
            let alice = try await server.createUser("alice")
            let token = try provider.token("alice", signedBy: Self.es256, at: server.clock.now)
            try await provider.stop()
            expectRefusal(try await enroll(server, bearer: token), 401, "invalid_token", "the issuer's keys could not be fetched")
            #expect(try await deviceCount(server, user: alice) == 0)
        }
    }

    @Test("An RS256 token verifies with keys fetched from the jwks_uri", arguments: Engine.available)
    func rs256FromTheJWKSURI(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            try await TestIdentityProvider.with(publishing: [Self.es256, Self.rs256]) { provider in
                _ = try await trust(server, provider.issuer, keys: ["jwks_uri": provider.jwksURI])
                let alice = try await server.createUser("alice")
                let answer = try await enroll(server, bearer: try provider.token("alice", signedBy: Self.rs256, at: server.clock.now))
                #expect(answer.status == 201, "\(answer.errorDescription ?? "")")
                // An ES256 signature presented as RS256 names no RS256 key of that kid.
                let confused = try provider.token("alice", signedBy: Self.es256, at: server.clock.now,
                                                  header: ["alg": .string("RS256")])
                expectRefusal(try await enroll(server, bearer: confused), 401, "invalid_token",
                              "the token is not signed with a key of its issuer (kid, alg)")
                #expect(try await deviceCount(server, user: alice) == 1)
            }
        }
    }

    /// A provider's JWKS endpoint in memory: counts fetches, each taking a moment.
    private final class SlowFetcher: JWKSFetcher {
        let fetches = Mutex(0)

        func fetch(_ uri: String) async throws(JWKSFetchError) -> ClientJWKS {
            fetches.withLock { $0 += 1 }
            try? await Task.sleep(for: .milliseconds(50))
            do { return try ClientJWKS(validating: .object(["keys": .array([Self.keyJSON])])) } catch { throw .keySet(error) }
        }

        static let keyJSON = JSONValue.object(
            TrustedIssuerTests.es256.publicJWK.compactMapValues { ($0 as? String).map(JSONValue.string) })
    }

    @Test("Requests that need an issuer's keys at the same moment share one fetch")
    func concurrentRequestsShareOneFetch() async throws {
        let fetcher = SlowFetcher()
        let cache = TrustedIssuerKeyCache(fetcher: fetcher, logger: testLogger, now: { Date(timeIntervalSince1970: 1_800_000_000) })
        let issuer = TrustedIssuer(
            id: "tis_1", tenantID: "ten_1", issuer: "https://login.bank.example", keys: .uri("https://login.bank.example/jwks"),
            audience: "bank-app", usernameClaim: "preferred_username", requiredScope: "", createdAt: .now, updatedAt: .now)
        let kids = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await cache.keys(of: issuer, at: "https://login.bank.example/jwks", lacksKey: { _ in false }).keys.map(\.kid)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(kids == Array(repeating: ["idp-ec-1"], count: 8))
        #expect(fetcher.fetches.withLock { $0 } == 1)
    }
}
