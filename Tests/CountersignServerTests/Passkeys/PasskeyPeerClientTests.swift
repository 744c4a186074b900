import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// Countersign's relying party against an authenticator it did not write: soft-webauthn's
/// software token (on Yubico's fido2 for CBOR and COSE, `Tests/Peers/soft_webauthn_client.py`)
/// registers a passkey on the account page and signs in with it on the hosted page.
@Suite("Passkeys: an independent authenticator (soft-webauthn) against the relying party")
struct PasskeyPeerClientTests {
    static let script = BuildProducts.packageRoot.appendingPathComponent("Tests/Peers/soft_webauthn_client.py")

    static let python: URL? = {
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard let path = searchPath.split(separator: ":").map({ "\($0)/python3" })
                .first(where: FileManager.default.isExecutableFile(atPath:)),
              (try? ChildProcess.runBlocking(URL(fileURLWithPath: path), ["-c", "import soft_webauthn, fido2"])) != nil else {
            FileHandle.standardError.write(Data("PasskeyPeerClientTests: SKIPPED: python3 with soft-webauthn and fido2 is not available\n".utf8))
            return nil
        }
        return URL(fileURLWithPath: path)
    }()

    /// Runs the token on `options` (the server's answer) and returns its JSON.
    static func token(_ command: String, state: URL, origin: String, options: Data) async throws -> JSONValue {
        let file = state.deletingLastPathComponent().appendingPathComponent("options-\(UUID().uuidString).json")
        try options.write(to: file)
        let output = try await ChildProcess.run(
            try #require(python), [script.path, command, state.path, origin, file.path])
        return try JSONValue(parsing: Data(output.utf8))
    }

    /// `user` signed in to the account page by approving on the phone: the browser, and the
    /// page's CSRF token.
    static func atTheAccountPage(_ user: EnrolledUser, _ server: TestServer) async throws -> (PageVisitor, String) {
        let browser = PageVisitor(server)
        let form = try await browser.get("/account")
        let attempt = try #require(form.hidden("attempt"))
        _ = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", user.username)])
        let request = try #require(try await user.kit.pendingRequests().first)
        _ = try await user.kit.approve(try await user.kit.details(for: request))
        _ = try await browser.post("/authorize/continue", [("attempt", attempt)])
        return (browser, try #require(try await browser.get("/account").hidden("csrf")))
    }

    static func json(_ value: JSONValue) throws -> Data {
        Data(value.canonicalString.utf8)
    }

    @Test("soft-webauthn registers a passkey on the account page and signs in with it, usernameless; a forged signature is refused")
    func registerAndSignIn() async throws {
        guard Self.python != nil else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("soft-webauthn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = folder.appendingPathComponent("token.json")

        try await TestServer.routed { server in
            let alice = try await server.enrolledUser("alice")
            // Signed in to the account page by approving on the phone.
            let (browser, csrf) = try await Self.atTheAccountPage(alice, server)

            let options = try await browser.post("/account/passkeys/options", [("csrf", csrf), ("name", "Soft token")])
            #expect(options.status == 200, "\(options.text)")
            let created = try JSONValue(parsing: options.data)
            let registration = try await Self.token("register", state: state, origin: server.base, options: options.data)
            let added = try await server.call(
                "POST", "/account/passkeys",
                body: try Self.json(.object([
                    "csrf": .string(csrf), "ceremony": try #require(created["ceremony"]), "credential": registration,
                ])),
                headers: browser.cookieHeaderForJSON)
            #expect(added.status == 200, "\(added.text)")
            #expect(try await browser.get("/account").text.contains("<h3>Soft token</h3>"))

            // Usernameless sign-in for a relying party, twice: the token's counter goes up.
            let client = try await server.createCodeFlowClient()
            for round in 1...2 {
                let verifier = CodeFlowClient.verifier()
                let page = try await browser.get(
                    "/authorize" + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(verifier),
                                                                 extra: [("prompt", "login")]))
                let attempt = try #require(page.hidden("attempt"), "\(page.text.prefix(300))")
                let requested = try await browser.post("/authorize/passkey/options", [("attempt", attempt)])
                let ceremony = try #require(try JSONValue(parsing: requested.data)["ceremony"])
                var assertion = try await Self.token("sign-in", state: state, origin: server.base, options: requested.data)
                if round == 2 {
                    // The same ceremony with a signature that is not the token's: refused, and spent.
                    var forged = assertion
                    if case .object(var members) = forged, case .object(var response)? = members["response"] {
                        response["signature"] = .string(Data(repeating: 0x30, count: 70).base64URLEncodedString)
                        members["response"] = .object(response)
                        forged = .object(members)
                    }
                    let refused = try await server.call(
                        "POST", "/authorize/passkey",
                        body: try Self.json(.object(["attempt": .string(attempt), "ceremony": ceremony, "credential": forged])),
                        headers: browser.cookieHeaderForJSON)
                    #expect(refused.status == 400 && refused.error == "invalid_signature", "\(refused.text)")
                    let again = try await browser.post("/authorize/passkey/options", [("attempt", attempt)])
                    assertion = try await Self.token("sign-in", state: state, origin: server.base, options: again.data)
                    let fresh = try #require(try JSONValue(parsing: again.data)["ceremony"])
                    let done = try await server.call(
                        "POST", "/authorize/passkey",
                        body: try Self.json(.object(["attempt": .string(attempt), "ceremony": fresh, "credential": assertion])),
                        headers: browser.cookieHeaderForJSON)
                    #expect(done.status == 200, "\(done.text)")
                    continue
                }
                let done = try await server.call(
                    "POST", "/authorize/passkey",
                    body: try Self.json(.object(["attempt": .string(attempt), "ceremony": ceremony, "credential": assertion])),
                    headers: browser.cookieHeaderForJSON)
                #expect(done.status == 200, "\(done.text)")
                let redirect = try #require(try JSONValue(parsing: done.data)["redirect"]?.stringValue)
                let code = try #require(URLComponents(string: redirect)?.queryItems?.first { $0.name == "code" }?.value)
                let tokens = try await server.redeem(code, client: client, verifier: verifier)
                let claims = try JSONValue(parsing: try CompactJWS(parsing: try #require(tokens["id_token"] as? String)).payload)
                #expect(claims["sub"]?.stringValue == alice.userID)
                // The token tests presence only: possession and presence, the class of a confirmation.
                #expect(claims["acr"]?.stringValue == "urn:countersign:acr:confirm")
                #expect(claims["amr"] == .array([.string("hwk"), .string("user")]))
            }
            let used = try await server.admin("GET", "/admin/v1/tenants/default/audit?limit=100")
            #expect(used.text.components(separatedBy: "\"passkey.used\"").count - 1 == 2, "\(used.text.prefix(400))")
        }
    }

    @Test("soft-webauthn against the passkey rules: its model denied (403 authenticator_not_allowed), user verification required by a group (400 user_not_verified), attestation required (400 attestation_not_trusted); allowed again, it registers")
    func softTokenAgainstThePasskeyRules() async throws {
        guard Self.python != nil else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("soft-webauthn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let metadata = try TestMetadataService()
        let file = folder.appendingPathComponent("mds.jwt")
        try Data(try metadata.blob(TestMetadataService.payload(serial: 1, nextUpdate: TestMetadataService.day(30), entries: [])).utf8)
            .write(to: file)
        let configuration = MetadataConfiguration(source: file.path, roots: [metadata.root.certificate])

        try await TestServer.routed(configure: { $0.metadata = configuration }) { server in
            let alice = try await server.enrolledUser("alice")
            // Signed in to the account page by approving on the phone.
            let (browser, csrf) = try await Self.atTheAccountPage(alice, server)
            /// A fresh soft token's registration on the account page: the answer.
            func register() async throws -> TestServer.Answer {
                let state = folder.appendingPathComponent("token-\(UUID().uuidString).json")
                let options = try await browser.post("/account/passkeys/options", [("csrf", csrf), ("name", "Soft token")])
                #expect(options.status == 200, "\(options.text)")
                let registration = try await Self.token("register", state: state, origin: server.base, options: options.data)
                return try await server.call(
                    "POST", "/account/passkeys",
                    body: try Self.json(.object([
                        "csrf": .string(csrf), "ceremony": try #require(try JSONValue(parsing: options.data)["ceremony"]),
                        "credential": registration,
                    ])),
                    headers: browser.cookieHeaderForJSON)
            }
            let zeros = "00000000-0000-0000-0000-000000000000"

            try await server.setPolicy(["passkeys": ["denied_aaguids": [zeros]]])
            let denied = try await register()
            #expect(denied.status == 403 && denied.error == "authenticator_not_allowed", "\(denied.text)")

            let group = try await server.admin("POST", "/admin/v1/tenants/default/groups", json: ["name": "treasury"])
            let groupID = try #require(group["id"] as? String)
            #expect(try await server.admin("PUT", "/admin/v1/tenants/default/groups/\(groupID)/members/\(alice.userID)").status == 204)
            let rule: [String: any Sendable] = ["group": "treasury", "user_verification_required": true]
            try await server.setPolicy(["passkeys": ["group_rules": [rule]] as [String: any Sendable]])
            let unverified = try await register()
            #expect(unverified.status == 400 && unverified.error == "user_not_verified", "\(unverified.text)")

            try await server.setPolicy(["passkeys": ["attestation": "direct", "allow_unattested": false] as [String: any Sendable]])
            let unattested = try await register()
            #expect(unattested.status == 400 && unattested.error == "attestation_not_trusted", "\(unattested.text)")

            try await server.setPolicy([:])
            #expect(try await register().status == 200)
            let listed = try await server.admin("GET", "/admin/v1/tenants/default/users/\(alice.userID)/passkeys")
            #expect((listed["items"] as? [Any])?.count == 1, "only the last registration is stored")
        }
    }
}

extension PageVisitor {
    /// The cookies this visitor holds, as a header for a JSON call the pages' script would make.
    var cookieHeaderForJSON: [String: String] {
        ["Cookie": cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ")]
    }
}
