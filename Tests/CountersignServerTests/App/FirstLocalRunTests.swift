import Foundation
import Testing
@testable import CountersignServer

/// The README's first run: `countersign serve` with no public URL listens on a loopback
/// address and must work end to end in a browser, passkeys included. Browsers allow passkeys
/// only at a domain name, so such a server is `http://localhost:<port>`; a browser that opens a
/// page at the loopback address is sent there, and a page that cannot use a passkey says so in
/// words, not on load.
@Suite("A first local run: localhost, not an address")
struct FirstLocalRunTests {
    @Test("A server listening on a loopback address with no public URL is http://localhost:<port>")
    func loopbackListenerIsLocalhost() async throws {
        try await TestServer.with(.sqlite) { server in
            let port = try #require(server.listening).port
            #expect(server.base == "http://localhost:\(port)")
            let discovery = try await server.call("GET", "/.well-known/openid-configuration")
            #expect(discovery["issuer"] as? String == "http://localhost:\(port)")
        }
    }

    @Test("A browser opening a page at 127.0.0.1 is sent to the same page at localhost; API calls are answered where they arrive")
    func pagesAtTheAddressMoveToLocalhost() async throws {
        try await TestServer.with(.sqlite) { server in
            let port = try #require(server.listening).port
            let address = "http://127.0.0.1:\(port)"
            let page = try await server.call(
                "GET", "/account?x=1", headers: [TestServer.redirectsAsAnswers: "1", "Accept": "text/html,application/xhtml+xml"],
                base: address)
            #expect(page.status == 307)
            #expect(page.header("Location") == "http://localhost:\(port)/account?x=1")
            let api = try await server.call("GET", "/.well-known/openid-configuration", base: address)
            #expect(api.status == 200)
            let form = try await server.call(
                "POST", "/account/enroll", headers: [TestServer.redirectsAsAnswers: "1", "Accept": "text/html"], base: address)
            #expect(form.status != 307, "a form post is not moved")
        }
    }

    @Test("At an address where passkeys cannot work, the sign-in page shows nothing on load, and the button says why and where to go",
          .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
    func passkeysAtAnAddressAreExplained() async throws {
        // An operator who set the public URL to the address itself: a free port, let go just
        // before the server takes it.
        let port = try PortHolder().port
        try await TestServer.with(.sqlite, configure: { configuration in
            configuration.port = port
            configuration.publicURL = URL(string: "http://127.0.0.1:\(port)")
        }) { server in
            #expect(server.base == "http://127.0.0.1:\(port)")
            try await Browser.session(width: 420, height: 900) { browser in
                try await browser.open(server.base + "/account")
                let button = try await browser.waitFor(css: "#passkey button")
                let line = try await browser.find("#passkey .field-error")
                // The page's passkey autofill has been asked for and refused by now.
                try await Task.sleep(for: .seconds(1))
                #expect(try await line.property("hidden", as: Bool.self) == true, "nothing is shown on load")
                try await button.click()
                try await browser.waitFor(text: "Passkeys work only at a domain name")
                let message = try await line.text()
                #expect(message.contains("Open this page at http://localhost:\(port)/account"), "\(message)")
                #expect(!message.contains("invalid domain"))
            }
        }
    }
}
