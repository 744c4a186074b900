import Testing
@testable import CountersignServer

/// Which redirect URIs a client may register, and which request URIs name them.
@Suite("Redirect URIs")
struct RedirectURITests {
    @Test("https, loopback http and reversed-domain schemes may be registered", arguments: [
        ("https://app.example.com/callback", RedirectURI.Kind.https),
        ("https://app.example.com/callback?tenant=acme", .https),
        ("https://app.example.com:8443/cb", .https),
        ("http://127.0.0.1/callback", .loopback),
        ("http://127.0.0.1:8080/callback", .loopback),
        ("http://[::1]:3000/cb", .loopback),
        ("com.example.app:/oauth2redirect", .privateUse),
        ("com.example.app:/cb", .privateUse),
        ("com.example.app://cb", .privateUse),
    ])
    func accepted(raw: String, kind: RedirectURI.Kind) throws {
        let uri = try RedirectURI(registering: raw)
        #expect(uri.kind == kind)
        #expect(uri.value == raw)
        #expect(uri.matches(raw))
    }

    @Test("anything else is refused with a message that says why", arguments: [
        ("", "must not be empty"),
        ("/callback", "not an absolute URI"),
        ("app.example.com/callback", "not an absolute URI"),
        ("https://app.example.com/callback#done", "fragment"),
        ("https://user:secret@app.example.com/cb", "user name or password"),
        ("https:///callback", "must name a host"),
        ("http://app.example.com/callback", "must use https"),
        ("http://10.0.0.1/callback", "must use https"),
        ("http://localhost:8080/callback", "rather than localhost"),
        ("myapp:/callback", "reversed domain name"),
        ("javascript:alert(1)", "reversed domain name"),
        ("data:text/html,hi", "reversed domain name"),
        ("file:///etc/passwd", "reversed domain name"),
        ("https://app.example.com/call back", "not an absolute URI"),
        ("https://app.example.com/\u{7}", "not an absolute URI"),
        ("https://app.example.com/" + String(repeating: "a", count: 2048), "at most 2048"),
    ])
    func refused(raw: String, reason: String) {
        do {
            _ = try RedirectURI(registering: raw)
            Issue.record("\(raw) was accepted")
        } catch {
            guard case .invalidField(let field, let message) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(field == "redirect_uris")
            #expect(message.contains(reason), "\(message)")
        }
    }

    @Test("a request names a registered URI only exactly, except for a loopback URI's port")
    func matching() throws {
        let web = try RedirectURI(registering: "https://app.example.com/cb")
        #expect(web.matches("https://app.example.com/cb"))
        for other in ["https://app.example.com/cb/", "https://app.example.com/cb?x=1", "https://APP.example.com/cb",
                      "https://app.example.com:443/cb", "https://app.example.com/cb#f", "http://app.example.com/cb",
                      "https://app.example.com/c"] {
            #expect(!web.matches(other), "\(other)")
        }
        let loopback = try RedirectURI(registering: "http://127.0.0.1/cb")
        for port in ["http://127.0.0.1:51234/cb", "http://127.0.0.1:1/cb", "http://127.0.0.1/cb"] {
            #expect(loopback.matches(port), "\(port)")
        }
        for other in ["http://127.0.0.1:51234/cb2", "http://[::1]:51234/cb", "https://127.0.0.1:51234/cb",
                      "http://127.0.0.1:51234/cb?x=1", "http://127.0.0.1:51234/cb#f", "http://u@127.0.0.1:51234/cb",
                      "http://localhost:51234/cb"] {
            #expect(!loopback.matches(other), "\(other)")
        }
        let withPort = try RedirectURI(registering: "http://[::1]:8080/cb")
        #expect(withPort.matches("http://[::1]:9999/cb"))
        #expect(!withPort.matches("http://127.0.0.1:8080/cb"))
        let app = try RedirectURI(registering: "com.example.app:/cb")
        #expect(app.matches("com.example.app:/cb"))
        #expect(!app.matches("com.example.app:/cb2"))
        #expect(!app.matches("com.example.evil:/cb"))
    }

    /// Ports RFC 8252 §7.3's "any port" does not stretch to: none is a port a listener can bind.
    static let badPorts = [
        ":0", ":65536", ":99999", ":" + String(repeating: "9", count: 23), ":", ":08080", ":00", ":+80", ":8080a",
    ]

    @Test("a loopback URI with a port that is not 1 to 65535 without leading zeros is refused at registration",
          arguments: badPorts.flatMap { ["http://127.0.0.1\($0)/cb", "http://[::1]\($0)/cb"] })
    func badLoopbackPortIsRefused(raw: String) {
        #expect(throws: AdminError.invalidField("redirect_uris", "\(raw): a port must be 1 to 65535, written without leading zeros")) {
            try RedirectURI(registering: raw)
        }
    }

    @Test("a request's loopback redirect_uri with such a port names no registered URI", arguments: badPorts)
    func badLoopbackPortDoesNotMatch(port: String) throws {
        let registered = try RedirectURI(registering: "http://127.0.0.1/cb")
        #expect(!registered.matches("http://127.0.0.1\(port)/cb"))
        #expect(registered.matches("http://127.0.0.1:65535/cb"))
        #expect(registered.matches("http://127.0.0.1:1/cb"))
    }

    @Test("an https URI's port follows the same rule", arguments: [":0", ":65536", ":0443", ":"])
    func badHTTPSPortIsRefused(port: String) {
        #expect(throws: AdminError.self) { try RedirectURI(registering: "https://app.example.com\(port)/cb") }
    }

    /// Characters RFC 3986 §2 does not allow in a URI, raw, and `*`, which it does but which
    /// would read as a wildcard; each with the sentence that refuses it.
    static let badCharacters: [(raw: String, reason: String)] = [
        (#"https://app.example.com/cb?next="home""#, #"holds " (U+22), which a URI may not hold; percent-encode it (RFC 3986 §2)"#),
        ("https://app.example.com/<script>", "holds < (U+3C), which a URI may not hold"),
        ("https://app.example.com/cb>", "holds > (U+3E), which a URI may not hold"),
        ("https://*.example.com/cb", "holds *: a redirect URI is matched exactly, never as a pattern; write %2A for a literal asterisk"),
        ("https://app.example.com/cb/*", "holds *: a redirect URI is matched exactly"),
        ("https://app.example.com/{tenant}", "holds { (U+7B)"),
        ("https://app.example.com/a|b", "holds | (U+7C)"),
        (#"https://app.example.com/a\b"#, #"holds \ (U+5C)"#),
        ("https://app.example.com/a^b", "holds ^ (U+5E)"),
        ("https://app.example.com/a`b", "holds ` (U+60)"),
        ("https://app.example.com/café", "holds é (U+E9)"),
        ("https://app.example.com/cb\u{202E}", "holds \u{202E} (U+202E)"),
        ("https://app.example.com/a%zz", "holds a % that is not followed by two hexadecimal digits"),
        ("https://app.example.com/a%4", "holds a % that is not followed by two hexadecimal digits"),
        ("https://app.example.com/[x]", "holds [ outside an IPv6 host"),
        ("com.example.app:/cb?x=<y>", "holds < (U+3C)"),
    ]

    @Test("a character RFC 3986 does not allow, or *, is refused with the character named",
          arguments: badCharacters.map(\.raw))
    func badCharacterIsRefused(raw: String) throws {
        let reason = try #require(Self.badCharacters.first { $0.raw == raw }).reason
        do {
            _ = try RedirectURI(registering: raw)
            Issue.record("\(raw) was accepted")
        } catch {
            guard case .invalidField(let field, let message) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(field == "redirect_uris")
            #expect(message == "\(raw) \(reason)" || message.hasPrefix("\(raw) \(reason)"), "\(message)")
        }
    }

    @Test("percent-encoded, every reserved and unreserved character but * is accepted")
    func encodedCharactersAreAccepted() throws {
        let raw = "https://app.example.com/a-b._~:@!$&'()+,;=%2A%22%3C/cb?x=%E2%80%AE&y=1"
        #expect(try RedirectURI(registering: raw).value == raw)
        #expect(try RedirectURI(registering: "http://[::1]:65535/cb").kind == .loopback)
    }

    @Test("the admin API refuses such a redirect URI with its field error and registers nothing",
          arguments: ["http://127.0.0.1:0/cb", "http://127.0.0.1:08080/cb", #"https://app.example.com/cb?x="y""#,
                      "https://app.example.com/<cb>", "https://app.example.com/*"])
    func adminAPIRefusesBadRedirectURI(raw: String) async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", "/admin/v1/tenants/default/clients", json: [
                "name": "Portal", "redirect_uris": [raw],
            ])
            #expect(created.status == 400)
            #expect(created.error == "invalid_request")
            #expect(created.errorDescription?.hasPrefix("field redirect_uris is invalid: \(raw)") == true,
                    "\(created.errorDescription ?? "")")
            let clients = try await server.admin("GET", "/admin/v1/tenants/default/clients")
            #expect((clients["items"] as? [Any])?.isEmpty == true, "nothing was registered")

            let client = try await server.createClient(name: "Portal")
            let patched = try await server.admin("PATCH", "/admin/v1/tenants/default/clients/\(client.id)",
                                                 json: ["redirect_uris": [raw]])
            #expect(patched.status == 400)
            let read = try await server.admin("GET", "/admin/v1/tenants/default/clients/\(client.id)")
            #expect((read["redirect_uris"] as? [String] ?? []).isEmpty, "the client kept its redirect URIs")
        }
    }
}
