import CountersignKit
import Crypto
import Foundation
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `countersign device enroll --sign-in`, the native-app flow of RFC 8252 as a user runs it: the
/// real executable prints the sign-in URL and listens on a loopback port; the person signs in
/// in a browser by approving on their phone; the browser is sent back to the terminal, which
/// exchanges the code and enrolls with the access token — no administrator, no ticket.
@Suite("The countersign device enroll --sign-in command")
struct CommandLineSignInTests {
    @Test("Signing in in a browser enrolls the terminal for the user who approved", .enabled(if: CommandLineDeviceTests.enabled))
    func enrollsBySigningIn() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = try await server.createCodeFlowClient(
                redirectURI: "http://127.0.0.1/callback", scopes: ["openid", "countersign:enroll"], isPublic: true)
            let alice = try await server.enrolledUser("alice")
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("sign-in-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: scratch) }
            let output = scratch.appendingPathComponent("out")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let command = Process()
            command.executableURL = try CommandLineTests.requireExecutable()
            command.arguments = ["device", "enroll", "--sign-in", "--server", server.base, "--client-id", client.id,
                                 "--no-browser", "--name", "Build terminal"]
            command.environment = ProcessInfo.processInfo.environment.merging(
                ["COUNTERSIGN_DEVICE_STORE": scratch.appendingPathComponent("device").path]) { $1 }
            command.standardOutput = try FileHandle(forWritingTo: output)
            command.standardError = command.standardOutput
            try command.run()
            defer { if command.isRunning { command.terminate() } }

            // The URL the terminal prints, as the person would copy it into a browser.
            var url: String?
            for _ in 0..<300 where url == nil {
                try await Task.sleep(for: .milliseconds(100))
                let printed = try String(contentsOf: output, encoding: .utf8)
                url = printed.split(separator: "\n").first { $0.hasPrefix("Sign in to enroll this terminal: ") }
                    .map { String($0.dropFirst("Sign in to enroll this terminal: ".count)) }
            }
            let printedSoFar = try String(contentsOf: output, encoding: .utf8)
            let signInURL = try #require(url, "the command printed no sign-in URL: \(printedSoFar)")
            #expect(signInURL.hasPrefix(server.base + "/authorize?"))
            // The server's clock stands still in tests, and the terminal signs its enrollment with
            // the real one. Under load (a whole debug suite on two cores) the steps above took
            // over five minutes once, and the enrollment's iat fell outside the window: the clock
            // is brought to the real time before the flow starts.
            let behind = Date().timeIntervalSince(server.clock.now)
            if behind > 0 { server.clock.advance(by: behind) }

            let browser = PageVisitor(server)
            let page = try await browser.get(String(signInURL.dropFirst(server.base.count)))
            let attempt = try #require(page.hidden("attempt"), "\(page.text.prefix(500))")
            _ = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", "alice")])
            let request = try #require(try await alice.kit.pendingRequests().first)
            _ = try await alice.kit.approve(try await alice.kit.details(for: request))
            let back = try await browser.post("/authorize/continue", [("attempt", attempt)])
            let callback = try #require(back.header("Location"))
            #expect(callback.hasPrefix("http://127.0.0.1:"), "a loopback port of the terminal's choosing")

            // The browser follows the redirect to the terminal's listener.
            let (body, landed) = try await URLSession.shared.data(from: try #require(URL(string: callback)))
            #expect((landed as? HTTPURLResponse)?.statusCode == 200)
            // It says what happens next, in the hosted pages' look: its one inline style is allowed
            // by its hash, and nothing else is.
            let html = String(decoding: body, as: UTF8.self)
            #expect(html.contains("<h1>Signed in</h1>") && html.contains("it finishes enrolling this device"), "\(html)")
            let policy = try #require((landed as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Security-Policy"))
            let style = try #require(html.components(separatedBy: "<style>").last?.components(separatedBy: "</style>").first)
            let hash = Data(SHA256.hash(data: Data(style.utf8))).base64EncodedString()
            #expect(policy == "default-src 'none'; style-src 'sha256-\(hash)'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
            for _ in 0..<300 where command.isRunning { try await Task.sleep(for: .milliseconds(100)) }
            let printed = try String(contentsOf: output, encoding: .utf8)
            #expect(command.terminationStatus == 0, "\(printed)")
            #expect(printed.contains("Enrolled Build terminal for alice at \(server.base)"), "\(printed)")
            let devices = try await server.admin("GET", "/admin/v1/tenants/default/users/\(alice.userID)/devices")
            #expect((devices["items"] as? [[String: any Sendable]])?.count == 2)
        }
    }
}
