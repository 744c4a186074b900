import Foundation
import Testing
@testable import CountersignServer

/// The way in for a person who opens the server's address, and the way back to the username
/// form for one who mistyped it.
@Suite("Pages: the landing page, and trying another username")
struct LandingAndStartOverTests {
    static let browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

    @Test("A browser opening the server's address gets a page naming the tenant that leads to the sign-in and the console")
    func browserGetsTheLandingPage() async throws {
        try await TestServer.routed { server in
            let page = try await server.call("GET", "/", headers: ["Accept": Self.browserAccept])
            #expect(page.status == 200)
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.header("Content-Security-Policy")?.contains("default-src 'none'") == true)
            let text = String(decoding: page.data, as: UTF8.self)
            #expect(text.contains(#"<h1 id="landing-heading">Welcome to Default</h1>"#), "\(text)")
            #expect(text.contains(#"<a class="button" id="account" href="/account">Sign in to your account</a>"#))
            #expect(text.contains(#"href="/console""#))
        }
    }

    @Test("Another tenant's address names that tenant and leads to its own account page")
    func otherTenantsLandingPage() async throws {
        try await TestServer.routed { server in
            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            let page = try await server.call("GET", "/t/acme", headers: ["Accept": Self.browserAccept])
            let text = String(decoding: page.data, as: UTF8.self)
            #expect(page.status == 200 && text.contains(#"<h1 id="landing-heading">Welcome to Acme</h1>"#), "\(page.status) \(text)")
            #expect(text.contains(#"href="/t/acme/account""#))
        }
    }

    @Test("An API client asking the server's address for JSON still gets the JSON 404", arguments: [
        ["Accept": "application/json"], ["Accept": "*/*"], [:],
    ])
    func apiClientKeepsTheJSON404(headers: [String: String]) async throws {
        try await TestServer.routed { server in
            let answer = try await server.call("GET", "/", headers: headers)
            #expect(answer.status == 404)
            #expect(answer.error == "not_found" && answer.errorDescription == "there is nothing at GET /")
        }
    }

    @Test("After 'No phone to ask', 'Try another username' shows the username form of the same sign-in, which then goes on with the right username")
    func tryAnotherUsernameStartsOverAtTheUsernameForm() async throws {
        try await TestServer.routed { server in
            let alice = try await server.enrolledUser("alice")
            let browser = AccountBrowser(server: server, send: { try await server.send($0) })
            let form = try await browser.get("/account")
            let attempt = try #require(form.hidden("attempt"), "\(form.text.prefix(500))")
            let unknown = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", "alcie")])
            #expect(unknown.text.contains("No phone to ask"))
            #expect(unknown.text.contains(#"<button type="submit" id="another-username">Try another username</button>"#), "\(unknown.text)")
            #expect(unknown.hidden("attempt") == attempt, "the same sign-in goes on")

            let again = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("start_over", "yes")])
            #expect(again.status == 200)
            #expect(again.text.contains(#"id="username""#) && again.text.contains(#"value="""#))
            #expect(!again.text.contains("username-error"), "nothing to correct yet")

            let waiting = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", "alice")])
            #expect(waiting.text.contains("Approve on your phone"))
            let request = try #require(try await alice.kit.pendingRequests().first)
            _ = try await alice.kit.approve(try await alice.kit.details(for: request))
            let done = try await browser.post("/authorize/continue", [("attempt", attempt)])
            #expect(done.status == 303 && done.header("Location")?.hasSuffix("/account") == true)
        }
    }

    @Test("An empty username typed in the form is still asked for again beside the field")
    func emptyUsernameIsStillRefused() async throws {
        try await TestServer.routed { server in
            let browser = AccountBrowser(server: server, send: { try await server.send($0) })
            let attempt = try #require(try await browser.get("/account").hidden("attempt"))
            let refused = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", "")])
            #expect(refused.status == 400 && refused.text.contains("Enter your username."))
        }
    }
}
