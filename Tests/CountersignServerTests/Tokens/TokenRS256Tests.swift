import CountersignCore
import Crypto
import Foundation
import Testing
import _CryptoExtras
@testable import CountersignServer

/// Clients registered for RS256 (`id_token_signed_response_alg`): their ID tokens and access
/// tokens are RS256, verifiable with the tenant's published RSA key; everyone else's stay ES256.
/// The tests check signatures with keys they build from the JWKS's `n` and `e` themselves.
@Suite("RS256 tokens")
struct TokenRS256Tests {
    /// A client of the default tenant whose tokens are signed with `algorithm`.
    static func client(_ server: TestServer, algorithm: String = "RS256", mode: String = "poll",
                       endpoint: String? = nil) async throws -> TestClient {
        var body: [String: any Sendable] = [
            "name": "Legacy portal", "scopes": ["openid", "offline_access", "profile"], "token_delivery_mode": mode,
            "id_token_signed_response_alg": algorithm,
        ]
        if let endpoint { body["notification_endpoint"] = endpoint }
        let answer = try await server.admin("POST", "/admin/v1/tenants/default/clients", json: body)
        #expect(answer.status == 201, "client: \(answer.errorDescription ?? "")")
        let client = try #require(answer["client"] as? [String: any Sendable])
        #expect(client["id_token_signed_response_alg"] as? String == algorithm)
        return TestClient(id: try #require(client["client_id"] as? String), secret: try #require(answer["client_secret"] as? String))
    }

    @Test("a client registered for RS256 gets ID and access tokens signed RS256 by a published RSA key")
    func rs256ClientGetsRS256Tokens() async throws {
        try await TestServer.routed { server in
            let client = try await Self.client(server)
            let alice = try await server.enrolledUser("alice")
            let tokens = try await server.approvedTokens(client, user: alice, scope: "openid offline_access profile")
            let keys = try await server.rsaJWKS()
            #expect(keys.count == 1)
            let idToken = try server.rsaVerifiedClaims(try tokens.string("id_token"), keys: keys)
            #expect(idToken.type == "JWT")
            #expect(idToken.claims["sub"] as? String == alice.userID)
            #expect(idToken.claims["aud"] as? String == client.id)
            let accessToken = try server.rsaVerifiedClaims(try tokens.string("access_token"), keys: keys)
            #expect(accessToken.type == "at+jwt")
            #expect(accessToken.claims["client_id"] as? String == client.id)
            #expect(accessToken.claims["scope"] as? String == "openid offline_access profile")
        }
    }

    @Test("the refresh grant signs the new tokens of an RS256 client with RS256 too")
    func refreshKeepsRS256() async throws {
        try await TestServer.routed { server in
            let client = try await Self.client(server)
            let alice = try await server.enrolledUser("alice")
            let first = try await server.approvedTokens(client, user: alice, scope: "openid offline_access")
            let refreshed = try await server.refresh(client, try first.string("refresh_token"))
            #expect(refreshed.status == 200, "\(refreshed.errorDescription ?? "")")
            let keys = try await server.rsaJWKS()
            #expect(try server.rsaVerifiedClaims(try refreshed.string("id_token"), keys: keys).type == "JWT")
            #expect(try server.rsaVerifiedClaims(try refreshed.string("access_token"), keys: keys).type == "at+jwt")
        }
    }

    @Test("a client that names no algorithm, or ES256, gets ES256 tokens from the EC key")
    func es256ClientsUnchanged() async throws {
        try await TestServer.routed { server in
            let unnamed = try await server.offlineClient()
            let named = try await Self.client(server, algorithm: "ES256")
            let alice = try await server.enrolledUser("alice")
            let ecKeys = try await server.jwks()
            let rsaKeys = try await server.rsaJWKS()
            for client in [unnamed, named] {
                let tokens = try await server.approvedTokens(client, user: alice, scope: "openid")
                for name in ["id_token", "access_token"] {
                    let token = try tokens.string(name)
                    let header = try Self.header(token)
                    #expect(header["alg"] as? String == "ES256")
                    _ = try server.verifiedClaims(token, keys: ecKeys)
                    let kid = try #require(header["kid"] as? String)
                    #expect(rsaKeys[kid] == nil)
                }
            }
        }
    }

    @Test("UserInfo and introspection accept an RS256 access token, and revocation reaches it")
    func rs256AccessTokenAtUserInfoAndIntrospection() async throws {
        try await TestServer.routed { server in
            let client = try await Self.client(server)
            let alice = try await server.enrolledUser("alice")
            let tokens = try await server.approvedTokens(client, user: alice, scope: "openid profile")
            let accessToken = try tokens.string("access_token")
            let userInfo = try await server.userInfo(accessToken)
            #expect(userInfo.status == 200, "\(userInfo.errorDescription ?? "")")
            #expect(userInfo["sub"] as? String == alice.userID)
            #expect(userInfo["preferred_username"] as? String == "alice")
            let active = try await server.introspect(client, accessToken)
            #expect(active["active"] as? Bool == true)
            #expect(active["client_id"] as? String == client.id)
            #expect(active["token_type"] as? String == "Bearer")
            #expect(try await server.revoke(client, accessToken).status == 200)
            #expect(try await server.introspect(client, accessToken)["active"] as? Bool == false)
            #expect(try await server.userInfo(accessToken).status == 401)
        }
    }

    @Test("a client switched to RS256 gets RS256 tokens from its next grant; its ES256 access tokens stay valid")
    func switchingAlgorithm() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let before = try await server.approvedTokens(client, user: alice, scope: "openid")
            let switched = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(client.id)", json: ["id_token_signed_response_alg": "RS256"])
            #expect(switched.status == 200)
            #expect(switched["id_token_signed_response_alg"] as? String == "RS256")
            let after = try await server.approvedTokens(client, user: alice, scope: "openid")
            _ = try server.rsaVerifiedClaims(try after.string("id_token"), keys: try await server.rsaJWKS())
            #expect(try await server.userInfo(try before.string("access_token")).status == 200)
            #expect(try await server.userInfo(try after.string("access_token")).status == 200)
        }
    }

    @Test("an RS256 ID token is a valid id_token_hint")
    func rs256IDTokenAsHint() async throws {
        try await TestServer.routed { server in
            let client = try await Self.client(server)
            let alice = try await server.enrolledUser("alice")
            let tokens = try await server.approvedTokens(client, user: alice, scope: "openid")
            let answer = try await server.bcAuthorize(client, [("scope", "openid"), ("id_token_hint", try tokens.string("id_token"))])
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        }
    }

    @Test("an access token whose header names the other algorithm than its key's is refused at UserInfo")
    func algorithmMustMatchKey() async throws {
        try await TestServer.routed { server in
            let alice = try await server.enrolledUser("alice")
            for (algorithm, relabelled) in [("RS256", "ES256"), ("ES256", "RS256")] {
                let client = try await Self.client(server, algorithm: algorithm)
                let token = try await server.approvedTokens(client, user: alice, scope: "openid").string("access_token")
                let parts = token.split(separator: ".")
                var header = try Self.header(token)
                header["alg"] = relabelled
                let forged = try JSONSerialization.data(withJSONObject: header).base64URLEncodedString + ".\(parts[1]).\(parts[2])"
                let answer = try await server.userInfo(forged)
                #expect(answer.status == 401, "\(algorithm) token labelled \(relabelled)")
                #expect(answer.error == "invalid_token")
                #expect(try await server.userInfo(token).status == 200)
            }
        }
    }

    @Test("push mode delivers an RS256 ID token, bound to the RS256 access token beside it, to an RS256 client",
          arguments: Engine.available)
    func pushDeliveryRS256(engine: Engine) async throws {
        try await TestServer.withReceiver(engine, configure: { $0.clientNotifications.pollInterval = .milliseconds(50) }) {
            server, receiver in
            receiver.acceptUnsigned()
            let client = try await Self.client(server, mode: "push", endpoint: receiver.url)
            let ada = try await server.enrolledUser("ada")
            let started = try await server.bcAuthorize(client, [
                ("scope", "openid"), ("login_hint", "ada"), ("client_notification_token", "push-rs256"),
            ])
            #expect(started.status == 200, "\(started.errorDescription ?? "")")
            _ = try await ada.device.decideNewest(.approve)
            try await eventually("the push reaches the client") { !receiver.calls.isEmpty }
            let body = try #require(receiver.calls.first?.json)
            let keys = try await server.rsaJWKS()
            let idToken = try server.rsaVerifiedClaims(try #require(body["id_token"] as? String), keys: keys)
            #expect(idToken.claims["urn:openid:params:jwt:claim:auth_req_id"] as? String == started["auth_req_id"] as? String)
            let accessToken = try #require(body["access_token"] as? String)
            #expect(try server.rsaVerifiedClaims(accessToken, keys: keys).type == "at+jwt")
            // OpenID Connect Core §3.1.3.6: RS256's hash is SHA-256, as ES256's.
            #expect(idToken.claims["at_hash"] as? String == TokenPushBindingTests.leftHalfHash(accessToken))
        }
    }

    @Test("Python's cryptography verifies an RS256 ID token with the published RSA key",
          .enabled(if: PythonPeer.cryptography != nil, "python3 with the cryptography package is not installed"))
    func pythonPeerVerifiesRS256() async throws {
        try await TestServer.routed { server in
            let client = try await Self.client(server)
            let alice = try await server.enrolledUser("alice")
            let idToken = try await server.approvedTokens(client, user: alice, scope: "openid").string("id_token")
            let jwks = try await server.call("GET", "/jwks")
            let verdict = try await PythonPeer.verify(idToken, jwks: jwks.data, in: server.scratch.directory)
            #expect(verdict == "verified RS256 \(alice.userID)")
        }
    }

    @Test("the Python verifier docs/ciba.md shows accepts the ID and access tokens of ES256 and RS256 clients",
          .enabled(if: PythonPeer.cryptography != nil, "python3 with the cryptography package is not installed"),
          arguments: ["ES256", "RS256"])
    func documentedPythonVerifier(algorithm: String) async throws {
        try await TestServer.with(.sqlite) { server in
            let client = try await Self.client(server, algorithm: algorithm)
            let alice = try await server.enrolledUser("alice")
            let tokens = try await server.approvedTokens(client, user: alice, scope: "openid")
            let jwks = try await server.call("GET", "/jwks")
            let driver = """
                import sys
                jwks = json.load(open(sys.argv[2]))
                id_token, access_token = open(sys.argv[1]).read().split()
                issuer, client_id = sys.argv[3], sys.argv[4]
                claims = verify_token(id_token, "JWT", jwks, issuer, client_id)
                verify_token(access_token, "at+jwt", jwks, issuer, client_id)
                try:
                    verify_token(id_token, "at+jwt", jwks, issuer, client_id)
                    raise SystemExit("an ID token passed as an access token")
                except ValueError:
                    pass
                print("verified", claims["sub"])
                """
            let script = try PythonPeer.documentedVerifier(algorithm: algorithm) + "\n" + driver
            let output = try await PythonPeer.run(
                script, token: try tokens.string("id_token") + " " + tokens.string("access_token"), jwks: jwks.data,
                arguments: [server.base, client.id], in: server.scratch.directory)
            #expect(output == "verified \(alice.userID)")
        }
    }

    /// The protected header of a compact JWS, decoded by the test.
    static func header(_ token: String) throws -> [String: any Sendable] {
        let encoded = try #require(token.split(separator: ".").first)
        let data = try #require(Data(base64URLEncoded: encoded))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: any Sendable])
    }
}

/// `python3` with the `cryptography` package, as a verifier that shares no code with Countersign.
enum PythonPeer {
    static let cryptography: URL? = {
        for path in ["/usr/bin/python3", "/usr/local/bin/python3"] where FileManager.default.isExecutableFile(atPath: path) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["-c", "import cryptography"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { continue }
            process.waitUntilExit()
            if process.terminationStatus == 0 { return URL(fileURLWithPath: path) }
        }
        FileHandle.standardError.write(Data("note: python3 with cryptography is missing; the Python RS256 check is SKIPPED\n".utf8))
        return nil
    }()

    /// Checks `token` the way a relying party's library does: pick the JWKS key by `kid`, insist
    /// on RS256 and an RSA key, verify PKCS#1 v1.5 with SHA-256. Prints `verified RS256 <sub>`.
    static let script = """
        import base64, json, sys
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding, rsa

        def b64(text):
            return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

        token = open(sys.argv[1]).read().strip()
        jwks = json.load(open(sys.argv[2]))
        header_b64, payload_b64, signature_b64 = token.split(".")
        header = json.loads(b64(header_b64))
        assert header["alg"] == "RS256", header
        jwk = next(k for k in jwks["keys"] if k["kid"] == header["kid"])
        assert jwk["kty"] == "RSA" and jwk["alg"] == "RS256" and jwk["use"] == "sig", jwk
        numbers = rsa.RSAPublicNumbers(int.from_bytes(b64(jwk["e"]), "big"), int.from_bytes(b64(jwk["n"]), "big"))
        key = numbers.public_key()
        assert key.key_size >= 2048, key.key_size
        key.verify(b64(signature_b64), (header_b64 + "." + payload_b64).encode(), padding.PKCS1v15(), hashes.SHA256())
        print("verified RS256", json.loads(b64(payload_b64))["sub"])
        """

    static func verify(_ token: String, jwks: Data, in directory: URL) async throws -> String {
        try await run(script, token: token, jwks: jwks, in: directory)
    }

    /// The verifier of docs/ciba.md ("Verifying tokens"), set to `algorithm`.
    static func documentedVerifier(algorithm: String) throws -> String {
        let root = BuildProducts.packageRoot
        let guide = try String(contentsOf: root.appendingPathComponent("docs/ciba.md"), encoding: .utf8)
        let section = try #require(guide.range(of: "## Verifying tokens"))
        let start = try #require(guide.range(of: "```python\n", range: section.upperBound..<guide.endIndex))
        let end = try #require(guide.range(of: "```", range: start.upperBound..<guide.endIndex))
        let code = String(guide[start.upperBound..<end.lowerBound])
        try #require(code.contains(#"ALGORITHM = "ES256""#))
        return code.replacingOccurrences(of: #"ALGORITHM = "ES256""#, with: "ALGORITHM = \"\(algorithm)\"")
    }

    /// Runs `script` with the paths of `token` and `jwks` and then `arguments`; its output.
    static func run(_ script: String, token: String, jwks: Data, arguments: [String] = [], in directory: URL) async throws -> String {
        let python = try #require(cryptography)
        let name = UUID().uuidString
        let files = (token: directory.appendingPathComponent("\(name).token"), jwks: directory.appendingPathComponent("\(name).json"),
                     script: directory.appendingPathComponent("\(name).py"))
        try Data(token.utf8).write(to: files.token)
        try jwks.write(to: files.jwks)
        try Data(script.utf8).write(to: files.script)
        let verified = try await ChildProcess.result(python, [files.script.path, files.token.path, files.jwks.path] + arguments)
        #expect(verified.status == 0, "\(verified.output)")
        return verified.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension TestServer {
    /// The published RS256 token-signing keys at `path`, by `kid`, each built from its `n` and
    /// `e` here, apart from the server's code.
    func rsaJWKS(path: String = "/jwks") async throws -> [String: _RSA.Signing.PublicKey] {
        let answer = try await call("GET", path)
        #expect(answer.status == 200)
        let keys = try #require(answer["keys"] as? [[String: any Sendable]])
        var byID: [String: _RSA.Signing.PublicKey] = [:]
        for key in keys where key["kty"] as? String == "RSA" {
            #expect(key["alg"] as? String == "RS256")
            let n = try #require(key["n"] as? String)
            let e = try #require(key["e"] as? String)
            let modulus = try #require(Data(base64URLEncoded: n))
            let exponent = try #require(Data(base64URLEncoded: e))
            byID[try #require(key["kid"] as? String)] = try _RSA.Signing.PublicKey(n: modulus, e: exponent)
        }
        return byID
    }

    /// The claims of a JWT whose header says RS256 and whose RSASSA-PKCS1-v1_5 SHA-256
    /// signature verifies with the key its `kid` names.
    func rsaVerifiedClaims(_ token: String, keys: [String: _RSA.Signing.PublicKey]) throws
        -> (type: String?, claims: [String: any Sendable]) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let header = try TokenRS256Tests.header(token)
        #expect(header["alg"] as? String == "RS256")
        let kid = try #require(header["kid"] as? String)
        let key = try #require(keys[kid], "no published RSA key has kid \(kid)")
        let signature = try #require(Data(base64URLEncoded: parts[2]))
        let valid = key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature),
                                         for: Data("\(parts[0]).\(parts[1])".utf8), padding: .insecurePKCS1v1_5)
        try #require(valid, "the RS256 signature does not verify")
        let payload = try #require(Data(base64URLEncoded: parts[1]))
        let claims = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: any Sendable])
        return (header["typ"] as? String, claims)
    }
}
