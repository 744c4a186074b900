import Foundation
import Synchronization
import Testing

/// What went wrong in the browser: `code` is the W3C WebDriver error code the driver answered
/// ("no such element", "javascript error", ...), "timeout" for a wait that ran out, or "session
/// not created" when chromedriver or Chromium would not start.
struct BrowserError: Error, CustomStringConvertible {
    let code: String
    let message: String
    /// The screenshot saved when a wait timed out.
    var screenshot: URL?

    var description: String {
        "\(code): \(message)" + (screenshot.map { "\nscreenshot: \($0.path)" } ?? "")
    }
}

/// Headless Chromium driven through chromedriver with W3C WebDriver, for browser tests. Start it
/// with `Browser.start()` and always end it with `quit()`, which also removes its profile.
///
/// Commands go over `RawHTTPConnection`, not URLSession: FoundationNetworking fails on every
/// chromedriver answer with "Failed writing header" (swift-corelibs-foundation#4965).
/// chromedriver is stopped with SIGKILL: started from a Swift task's thread, it inherits a signal
/// mask that blocks SIGTERM, so `Process.terminate()` does nothing.
final class Browser: Sendable {
    /// Debian's `chromium`, or whichever is on PATH.
    static let chromium: URL? = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
        ? URL(fileURLWithPath: "/usr/bin/chromium") : ChildProcess.find("chromium")
    static let chromedriver: URL? = ChildProcess.find("chromedriver")

    /// Whether browser tests can run here; says on stderr why not, once.
    static var isAvailable: Bool { availability }
    private static let availability: Bool = {
        guard chromium != nil, chromedriver != nil else {
            FileHandle.standardError.write(Data(
                "note: chromium or chromedriver is not installed; browser tests are SKIPPED (apt-get install chromium chromium-driver)\n".utf8))
            return false
        }
        return true
    }()

    /// The W3C key under which an element reference travels.
    fileprivate static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    /// chromedriver's port on 127.0.0.1.
    private let port: Int
    /// `/session/<id>`: every command's path starts here.
    private let session: String
    private let driver: Mutex<Process>
    /// Holds the Chromium profile and chromedriver's output.
    private let scratch: URL

    private init(port: Int, session: String, driver: consuming sending Process, scratch: URL) {
        self.port = port
        self.session = session
        self.driver = Mutex(driver)
        self.scratch = scratch
    }

    deinit {
        // A test that forgot `quit()` should not leave chromedriver running.
        driver.withLock { if $0.isRunning { kill($0.processIdentifier, SIGKILL) } }
    }

    // MARK: Starting and stopping

    /// Runs `body` in a new browser and always quits it. When `body` throws, the page it was on
    /// is saved as a PNG in the temporary directory first, and its path printed.
    static func session<Result>(
        width: Int = 1280, height: Int = 900, _ body: (Browser) async throws -> Result
    ) async throws -> Result {
        let browser = try await start(width: width, height: height)
        do {
            let result = try await body(browser)
            await browser.quit()
            return result
        } catch {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("browser-failure-\(UUID().uuidString).png").path
            if (try? await browser.saveScreenshot(to: path)) != nil { print("the failing page is in \(path)") }
            await browser.quit()
            throw error
        }
    }

    /// Starts chromedriver on a free port and opens a session with a fresh headless Chromium.
    static func start(width: Int = 1280, height: Int = 900) async throws -> Browser {
        guard let chromium, let chromedriver else {
            throw BrowserError(code: "session not created", message: "chromium or chromedriver is not installed")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("browser-\(UUID().uuidString)")
        let profile = scratch.appendingPathComponent("profile")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        var lastFailure: any Error = BrowserError(code: "session not created", message: "chromedriver did not start")
        // Another process may take the free port between PortHolder closing it and chromedriver
        // binding it; chromedriver then exits at once, and another port is tried.
        for _ in 0..<3 {
            let process = Process()
            let port: Int
            do {
                port = try await launch(chromedriver, process, output: scratch.appendingPathComponent("chromedriver.out"))
            } catch {
                lastFailure = error
                continue
            }
            do {
                let options: [String: Any] = [
                    "binary": chromium.path,
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                             "--window-size=\(width),\(height)", "--user-data-dir=\(profile.path)"],
                ]
                let capabilities: [String: Any] = ["browserName": "chrome", "goog:chromeOptions": options]
                let created = try await request("POST", port, "/session", ["capabilities": ["alwaysMatch": capabilities]])
                guard let id = (created as? [String: Any])?["sessionId"] as? String else {
                    throw BrowserError(code: "session not created", message: "no sessionId in \(created)")
                }
                return Browser(port: port, session: "/session/\(id)", driver: process, scratch: scratch)
            } catch {
                kill(process.processIdentifier, SIGKILL)
                killStragglers(of: profile)
                try? FileManager.default.removeItem(at: scratch)
                throw error
            }
        }
        try? FileManager.default.removeItem(at: scratch)
        throw lastFailure
    }

    /// Runs chromedriver on a free port and returns the port once `/status` says it is ready.
    private static func launch(_ chromedriver: URL, _ process: Process, output: URL) async throws -> Int {
        let port = try PortHolder().port  // released at once, for chromedriver to bind
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let log = try FileHandle(forWritingTo: output)
        defer { try? log.close() }
        process.executableURL = chromedriver
        process.arguments = ["--port=\(port)"]
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(20)
        while process.isRunning, ContinuousClock.now < deadline {
            let status = try? await request("GET", port, "/status", nil) as? [String: Any]
            if status?["ready"] as? Bool == true { return port }
            do { try await Task.sleep(for: .milliseconds(50)) } catch { break }
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        let said = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        throw BrowserError(code: "session not created", message: "chromedriver on port \(port) did not become ready: \(said)")
    }

    /// Ends the session (closing Chromium), stops chromedriver and removes the profile. Never
    /// throws, so that it can run in any test's cleanup.
    func quit() async {
        _ = try? await command("DELETE", "")
        driver.withLock { if $0.isRunning { kill($0.processIdentifier, SIGKILL) } }
        Self.killStragglers(of: scratch.appendingPathComponent("profile"))
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Kills any Chromium still using this browser's profile: when the session could not be
    /// deleted, chromedriver's exit leaves Chromium running. Linux only (reads /proc).
    private static func killStragglers(of profile: URL) {
        let marker = Data("--user-data-dir=\(profile.path)".utf8)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let commandLine = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                  commandLine.range(of: marker) != nil else { continue }
            kill(pid, SIGKILL)
        }
    }

    // MARK: Pages

    func open(_ url: String) async throws { _ = try await command("POST", "/url", ["url": url]) }
    func currentURL() async throws -> String { try await command("GET", "/url", as: String.self) }
    func title() async throws -> String { try await command("GET", "/title", as: String.self) }
    func pageSource() async throws -> String { try await command("GET", "/source", as: String.self) }

    /// The page's visible text, as a user reads it.
    func bodyText() async throws -> String {
        try await execute(script: "return document.body ? document.body.innerText : ''", as: String.self)
    }

    func windowSize(width: Int, height: Int) async throws {
        _ = try await command("POST", "/window/rect", ["width": width, "height": height])
    }

    func cookies() async throws -> [Cookie] { try await command("GET", "/cookie", as: [Cookie].self) }

    /// Sets a cookie on the page's origin (open a page of it first), as a copy from another
    /// browser would be.
    func addCookie(_ name: String, _ value: String, httpOnly: Bool = true) async throws {
        _ = try await command("POST", "/cookie", ["cookie": ["name": name, "value": value, "path": "/", "httpOnly": httpOnly]])
    }

    func deleteCookie(_ name: String) async throws { _ = try await command("DELETE", "/cookie/" + name) }

    /// A PNG of the viewport.
    func screenshot() async throws -> Data {
        let encoded = try await command("GET", "/screenshot", as: String.self)
        guard let png = Data(base64Encoded: encoded) else {
            throw BrowserError(code: "unknown error", message: "the screenshot is not base64")
        }
        return png
    }

    func saveScreenshot(to path: String) async throws {
        try await screenshot().write(to: URL(fileURLWithPath: path))
    }

    /// Runs `script` as a function body (`return` gives its value); `arguments` may hold elements.
    func execute<T: Decodable>(script: String, arguments: [any Sendable] = [], as type: T.Type = T.self) async throws -> T {
        try Self.decode(try await run(script, arguments), as: T.self)
    }

    /// Runs `script` for its effect.
    func execute(script: String, arguments: [any Sendable] = []) async throws {
        _ = try await run(script, arguments)
    }

    private func run(_ script: String, _ arguments: [any Sendable]) async throws -> Any {
        // Elements travel as W3C references; anything else as JSON.
        let args: [Any] = arguments.map { argument -> Any in
            if let element = argument as? Element { return [Self.elementKey: element.id] }
            return argument
        }
        return try await command("POST", "/execute/sync", ["script": script, "args": args])
    }

    // MARK: Elements

    /// The first element matching `css`; throws naming the selector when there is none.
    func find(_ css: String) async throws -> Element {
        do {
            return try element(try await command("POST", "/element", ["using": "css selector", "value": css]), css)
        } catch let error as BrowserError where error.code == "no such element" {
            let url = (try? await currentURL()) ?? "the current page"
            throw BrowserError(code: error.code, message: "no element matches the CSS selector \(css) on \(url)")
        }
    }

    func findAll(_ css: String) async throws -> [Element] {
        let found = try await command("POST", "/elements", ["using": "css selector", "value": css])
        return try ((found as? [Any]) ?? []).map { try element($0, css) }
    }

    private func element(_ reference: Any, _ css: String) throws -> Element {
        guard let id = (reference as? [String: Any])?[Self.elementKey] as? String else {
            throw BrowserError(code: "unknown error", message: "not an element reference: \(reference)")
        }
        return Element(browser: self, id: id, selector: css)
    }

    // MARK: Waiting

    /// Waits until the page's visible text contains `text`.
    func waitFor(text: String, timeout: Duration = .seconds(10)) async throws {
        try await poll("the text \"\(text)\"", timeout) { try await self.bodyText().contains(text) ? () : nil }
    }

    /// Waits until an element matches `css`, and returns it.
    @discardableResult
    func waitFor(css: String, timeout: Duration = .seconds(10)) async throws -> Element {
        try await poll("an element matching \(css)", timeout) { try await self.findAll(css).first }
    }

    /// Waits until the current URL satisfies `predicate`, and returns it.
    @discardableResult
    func waitForURL(where predicate: (String) -> Bool, timeout: Duration = .seconds(10)) async throws -> String {
        try await poll("a matching URL", timeout) {
            let url = try await self.currentURL()
            return predicate(url) ? url : nil
        }
    }

    /// Tries `attempt` every 100 ms until it gives a value; on timeout, throws with the page's
    /// URL and text and saves a screenshot.
    private func poll<T>(_ what: String, _ timeout: Duration, _ attempt: () async throws -> T?) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        var lastError: (any Error)?
        while true {
            do {
                if let found = try await attempt() { return found }
                lastError = nil
            } catch {
                lastError = error  // a script can fail while a page is loading: try again
            }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let url = (try? await currentURL()) ?? "an unknown URL"
        let text = (try? await bodyText()) ?? "(unreadable)"
        var message = "waited \(timeout) for \(what) on \(url)"
        if let lastError { message += " (last error: \(lastError))" }
        message += "\n--- page text ---\n\(text.prefix(2000))"
        var failure = BrowserError(code: "timeout", message: message)
        let shot = FileManager.default.temporaryDirectory.appendingPathComponent("browser-timeout-\(UUID().uuidString).png")
        if (try? await saveScreenshot(to: shot.path)) != nil {
            failure.screenshot = shot
            print("Browser: the page that timed out is in \(shot.path)")
        }
        throw failure
    }

    // MARK: WebDriver over HTTP

    fileprivate func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> Any {
        try await Self.request(method, port, session + path, body)
    }

    fileprivate func command<T: Decodable>(_ method: String, _ path: String, as type: T.Type) async throws -> T {
        try Self.decode(try await command(method, path), as: T.self)
    }

    /// Sends one command and returns the `value` of the answer, throwing the driver's error.
    private static func request(_ method: String, _ port: Int, _ path: String, _ body: [String: Any]?) async throws -> Any {
        let payload = method == "POST" ? [UInt8](try JSONSerialization.data(withJSONObject: body ?? [:])) : []
        let head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
            + "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(payload.count)\r\n\r\n"
        let connection = try RawHTTPConnection(port: port)
        try connection.send(Array(head.utf8) + payload)
        let response = try await connection.response()  // on a thread of its own; gives up after 30 s
        let parts = response.components(separatedBy: "\r\n\r\n")
        let status = parts[0].split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        let answer = (try? JSONSerialization.jsonObject(with: Data(parts.dropFirst().joined(separator: "\r\n\r\n").utf8)))
            as? [String: Any]
        let value = answer?["value"] ?? NSNull()
        if let failure = value as? [String: Any], let code = failure["error"] as? String {
            throw BrowserError(code: code, message: (failure["message"] as? String) ?? "")
        }
        guard status == 200, answer != nil else {
            throw BrowserError(code: "unknown error", message: "\(method) \(path) answered: \(response.prefix(500))")
        }
        return value
    }

    /// Decodes a JSON value (wrapped in an array, as JSONSerialization wants a container).
    fileprivate static func decode<T: Decodable>(_ value: Any, as type: T.Type) throws -> T {
        let data = try JSONSerialization.data(withJSONObject: [value])
        return try JSONDecoder().decode([T].self, from: data)[0]
    }
}

extension Browser {
    /// A cookie as the browser holds it.
    struct Cookie: Sendable, Decodable, Equatable {
        let name: String
        let value: String
        let secure: Bool
        let httpOnly: Bool
        let sameSite: String?
        let path: String?
        let domain: String?
    }

    /// An element of the page, found by CSS selector.
    struct Element: Sendable {
        let browser: Browser
        let id: String
        /// The selector that found it.
        let selector: String

        private var path: String { "/element/\(id)" }

        func click() async throws { _ = try await browser.command("POST", path + "/click", [:]) }
        func clear() async throws { _ = try await browser.command("POST", path + "/clear", [:]) }
        /// Types `text` into the element, as keystrokes.
        func type(_ text: String) async throws { _ = try await browser.command("POST", path + "/value", ["text": text]) }
        /// The rendered text.
        func text() async throws -> String { try await browser.command("GET", path + "/text", as: String.self) }

        /// The HTML attribute, or nil when the element has none.
        func attribute(_ name: String) async throws -> String? {
            try await browser.command("GET", path + "/attribute/\(name)", as: String?.self)
        }

        /// The DOM property (`value`, `checked`, ...), or nil when it is null or undefined.
        func property<T: Decodable>(_ name: String, as type: T.Type = T.self) async throws -> T? {
            try await browser.command("GET", path + "/property/\(name)", as: T?.self)
        }
    }
}

// MARK: Scripts before the page's

extension Browser {
    /// Runs `script` in every page this browser opens from now on, before the page's own
    /// scripts (Chrome DevTools Protocol, `Page.addScriptToEvaluateOnNewDocument`): to take
    /// away a browser feature a page would otherwise use.
    func runBeforeEveryPage(_ script: String) async throws {
        _ = try await command("POST", "/goog/cdp/execute",
                              ["cmd": "Page.addScriptToEvaluateOnNewDocument", "params": ["source": script]])
    }
}

// MARK: Virtual authenticators

extension Browser {
    /// What a virtual authenticator is (WebAuthn Level 3 §11, "Virtual Authenticators").
    /// The default is a platform authenticator that keeps discoverable credentials, verifies the
    /// user, and always consents: a laptop's fingerprint reader whose owner says yes.
    struct VirtualAuthenticatorOptions: Sendable {
        var `protocol` = "ctap2"
        var transport = "internal"
        var hasResidentKey = true
        var hasUserVerification = true
        var isUserConsenting = true
        var isUserVerified = true
        /// Whether its credentials may be synced (the BE flag), as a password manager's are.
        var defaultBackupEligibility = false

        fileprivate var json: [String: Any] {
            ["protocol": `protocol`, "transport": transport, "hasResidentKey": hasResidentKey,
             "hasUserVerification": hasUserVerification, "isUserConsenting": isUserConsenting,
             "isUserVerified": isUserVerified, "defaultBackupEligibility": defaultBackupEligibility,
             "defaultBackupState": defaultBackupEligibility]
        }
    }

    /// A credential a virtual authenticator holds (§11, "Get Credentials"); its private key
    /// is left out.
    struct VirtualCredential: Sendable, Decodable, Equatable {
        /// base64url.
        let credentialId: String
        let isResidentCredential: Bool
        let rpId: String?
        /// base64url; nil for a credential that is not discoverable.
        let userHandle: String?
        let signCount: Int
    }

    /// An authenticator the browser uses for WebAuthn instead of real hardware, until removed
    /// or the session ends (WebAuthn Level 3 §11, "WebDriver Extension").
    struct VirtualAuthenticator: Sendable {
        let browser: Browser
        let id: String

        private var path: String { "/webauthn/authenticator/\(id)" }

        /// The credentials it holds.
        func credentials() async throws -> [VirtualCredential] {
            try await browser.command("GET", path + "/credentials", as: [VirtualCredential].self)
        }

        /// Removes it from the browser ("Remove Virtual Authenticator").
        func remove() async throws {
            _ = try await browser.command("DELETE", path)
        }

        /// Whether the next user verifications succeed ("Set User Verified").
        func setUserVerified(_ verified: Bool) async throws {
            _ = try await browser.command("POST", path + "/uv", ["isUserVerified": verified])
        }
    }

    /// Adds a virtual authenticator to the browser (WebAuthn Level 3 §11, "Add Virtual Authenticator").
    func addVirtualAuthenticator(_ options: VirtualAuthenticatorOptions = .init()) async throws -> VirtualAuthenticator {
        let id = try Self.decode(try await command("POST", "/webauthn/authenticator", options.json), as: String.self)
        return VirtualAuthenticator(browser: self, id: id)
    }
}

extension Browser {
    /// The hosted sign-in's username form, filled with `user`'s name and sent; then the request
    /// approved on `user`'s phone through the SDK, once the page waits for it.
    func signInByPhone(_ user: EnrolledUser) async throws {
        try await find("#username").type(user.username)
        try await find("#continue").click()
        try await approveOnThePhone(user)
    }

    /// Approves the request the page waits for on `user`'s phone, through the SDK.
    func approveOnThePhone(_ user: EnrolledUser) async throws {
        try await waitFor(text: "Approve on your phone")
        let request = try #require(try await user.kit.pendingRequests().first)
        _ = try await user.kit.approve(try await user.kit.details(for: request))
    }
}
