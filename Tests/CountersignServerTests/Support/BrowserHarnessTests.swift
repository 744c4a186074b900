import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import Testing

/// The browser harness itself, against a tiny site served from the test: typing and submitting a
/// form, cookie attributes, waiting for text a script writes later, screenshots, and a wait that
/// times out. Serialized: each test runs its own Chromium, and two cores run one at a time best.
@Suite(.serialized, .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct BrowserHarnessTests {
    @Test func typesIntoAFormAndSubmitsIt() async throws {
        try await withBrowser { browser, site in
            try await browser.open(site + "/form")
            #expect(try await browser.title() == "Form")
            let name = try await browser.find("#name")
            try await name.type("placeholder")
            try await name.clear()
            try await name.type("Ada Lovelace")
            #expect(try await name.property("value", as: String.self) == "Ada Lovelace")
            #expect(try await name.attribute("name") == "name")
            try await browser.find("#send").click()
            try await browser.waitFor(text: "Hello, Ada Lovelace")
            #expect(try await browser.find("#echo").text() == "Hello, Ada Lovelace")
            #expect(try await browser.currentURL() == site + "/form")
            #expect(try await browser.pageSource().contains("id=\"echo\""))
        }
    }

    @Test func findNamesTheMissingSelector() async throws {
        try await withBrowser { browser, site in
            try await browser.open(site + "/form")
            let error = try await #require(throws: BrowserError.self) { try await browser.find("#nowhere") }
            #expect(error.code == "no such element")
            #expect(error.message.contains("#nowhere") && error.message.contains(site + "/form"))
            #expect(try await browser.findAll("input").count == 1)
        }
    }

    @Test func reportsCookieAttributes() async throws {
        try await withBrowser { browser, site in
            try await browser.open(site + "/cookie")
            try await browser.waitFor(text: "Cookie set")
            let cookie = try await #require(browser.cookies().first { $0.name == "session" })
            #expect(cookie.value == "abc123")
            #expect(cookie.httpOnly)
            #expect(!cookie.secure)
            #expect(cookie.sameSite == "Lax")
            #expect(cookie.path == "/")
            #expect(cookie.domain == "127.0.0.1")
            // HttpOnly: the page's scripts cannot read it.
            #expect(try await browser.execute(script: "return document.cookie", as: String.self) == "")
        }
    }

    @Test func waitsForTextAScriptWritesLater() async throws {
        try await withBrowser { browser, site in
            try await browser.open(site + "/delayed")
            #expect(try await browser.bodyText().contains("Waiting"))
            try await browser.waitFor(text: "Ready now", timeout: .seconds(5))
            try await browser.waitFor(css: "#status.done")
            let url = try await browser.waitForURL(where: { $0.hasSuffix("/delayed") })
            #expect(url == site + "/delayed")
        }
    }

    @Test func takesAScreenshot() async throws {
        try await withBrowser { browser, site in
            try await browser.windowSize(width: 800, height: 600)
            try await browser.open(site + "/form")
            let png = try await browser.screenshot()
            #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            let heading = try await browser.find("h1")
            let sum = try await browser.execute(script: "return arguments[0].textContent + arguments[1]",
                                                arguments: [heading, 2], as: String.self)
            #expect(sum == "Form2")
        }
    }

    @Test func aWaitThatTimesOutNamesTheURLAndSavesAScreenshot() async throws {
        try await withBrowser { browser, site in
            try await browser.open(site + "/delayed")
            let error = try await #require(throws: BrowserError.self) {
                try await browser.waitFor(text: "never appears", timeout: .milliseconds(500))
            }
            #expect(error.code == "timeout")
            #expect(error.message.contains(site + "/delayed"))
            #expect(error.message.contains("never appears"))
            let screenshot = try #require(error.screenshot)
            defer { try? FileManager.default.removeItem(at: screenshot) }
            #expect(try Data(contentsOf: screenshot).prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
        }
    }

    /// Runs `body` with a fresh browser and the site's base URL, then quits and stops both
    /// whether or not `body` threw.
    private func withBrowser(_ body: (Browser, String) async throws -> Void) async throws {
        let site = try await HarnessSite.start()
        let browser: Browser
        do {
            browser = try await Browser.start()
        } catch {
            try await site.stop()
            throw error
        }
        do {
            try await body(browser, site.base)
        } catch {
            await browser.quit()
            try await site.stop()
            throw error
        }
        await browser.quit()
        try await site.stop()
    }
}

/// The pages the harness tests browse, served on 127.0.0.1 by Hummingbird.
private final class HarnessSite: Sendable {
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    let base: String

    private init(group: ServiceGroup, task: Task<Void, any Error>, port: Int) {
        self.group = group
        self.task = task
        base = "http://127.0.0.1:\(port)"
    }

    static func start() async throws -> HarnessSite {
        let router = Router(context: BasicRequestContext.self)
        router.get("/form") { _, _ in
            page("Form", #"<form method="post" action="/form"><input id="name" name="name"><button id="send" type="submit">Send</button></form>"#)
        }
        router.post("/form") { request, _ in
            let body = String(buffer: try await request.body.collect(upTo: 1 << 16))
            var form = URLComponents()
            form.percentEncodedQuery = body.replacingOccurrences(of: "+", with: "%20")
            let name = form.queryItems?.first { $0.name == "name" }?.value ?? ""
            return page("Echo", "<p id=\"echo\">Hello, \(escape(name))</p>")
        }
        router.get("/cookie") { _, _ in
            page("Cookie", "<p>Cookie set</p>", headers: [.setCookie: "session=abc123; HttpOnly; SameSite=Lax; Path=/"])
        }
        router.get("/delayed") { _, _ in
            page("Delayed", #"<p id="status">Waiting</p><script src="/delayed.js"></script>"#)
        }
        // Two seconds, so that the page still says "Waiting" when the test first reads it on a
        // loaded machine (300 ms was once too short while the suite ran beside a soak).
        router.get("/delayed.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript"], body: ResponseBody(byteBuffer: ByteBuffer(string: """
                setTimeout(() => {
                    const status = document.getElementById('status');
                    status.textContent = 'Ready now';
                    status.className = 'done';
                }, 2000);
                """)))
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "harness-site"),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }, logger: testLogger)
        let group = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [], logger: testLogger))
        let task = Task { try await group.run() }
        var port = 0
        for await bound in ports {
            port = bound
            break
        }
        let site = HarnessSite(group: group, task: task, port: port)
        guard port > 0 else {
            try await site.stop()
            throw BrowserError(code: "unknown error", message: "the harness site did not start")
        }
        return site
    }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }

    private static func page(_ title: String, _ body: String, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        let html = "<!doctype html><html><head><title>\(title)</title></head><body><h1>\(title)</h1>\(body)</body></html>"
        return Response(status: .ok, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
