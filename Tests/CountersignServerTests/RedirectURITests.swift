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
}
