import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The relying party `docs/integrating.md` §8.2 shows (Python, Authlib), run as written against a
/// listening server: its `start_sign_in` sends the browser to the sign-in, the person approves on
/// the phone, and its `finish_sign_in` exchanges the code and verifies the ID token.
@Suite("The code flow example of docs/integrating.md")
struct CodeFlowExampleTests {
    /// The first python3 on PATH, if it has Authlib and requests.
    static let python: URL? = {
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard let path = searchPath.split(separator: ":").map({ "\($0)/python3" })
                .first(where: FileManager.default.isExecutableFile(atPath:)),
              (try? ChildProcess.runBlocking(URL(fileURLWithPath: path), ["-c", "import authlib, requests"])) != nil else {
            FileHandle.standardError.write(Data("CodeFlowExampleTests: SKIPPED: python3 with authlib and requests is not available\n".utf8))
            return nil
        }
        return URL(fileURLWithPath: path)
    }()

    static let driver = """
        import json, sys
        sys.path.insert(0, sys.argv[1])
        import code_flow_client as rp
        rp.ISSUER, rp.CLIENT_ID, rp.CLIENT_SECRET, rp.REDIRECT_URI = sys.argv[2:6]
        if sys.argv[6] == "start":
            session = {}
            url = rp.start_sign_in(session)
            print(json.dumps({"url": url, "session": session}))
        else:
            session = json.loads(sys.argv[7])
            print(json.dumps(dict(rp.finish_sign_in(session, sys.argv[8]))))
        """

    @Test("The example signs Alice in and verifies her ID token", .enabled(if: python != nil, "python3 with authlib and requests is not available"))
    func exampleSignsIn() async throws {
        let guide = try String(contentsOf: DocumentationExamplesTests.root.appendingPathComponent("docs/integrating.md"), encoding: .utf8)
        let start = try #require(guide.range(of: "```python\n# code_flow_client.py"))
        let end = try #require(guide.range(of: "\n```", range: start.upperBound..<guide.endIndex))
        let example = String(guide[guide.index(start.lowerBound, offsetBy: "```python\n".count)..<end.lowerBound])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try example.write(to: folder.appendingPathComponent("code_flow_client.py"), atomically: true, encoding: .utf8)

        try await TestServer.with(.sqlite) { server in
            let client = try await server.createCodeFlowClient(redirectURI: "http://127.0.0.1/callback", scopes: ["openid", "profile"])
            let alice = try await server.enrolledUser("alice")
            let settings = [folder.path, server.base, client.id, try #require(client.secret), client.redirectURI]
            // Authlib refuses plain http unless told this is a test.
            let environment = ["AUTHLIB_INSECURE_TRANSPORT": "1"]
            let python = try #require(Self.python)
            let started = try await ChildProcess.run(python, ["-c", Self.driver] + settings + ["start"], environment: environment)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(started.utf8)) as? [String: Any])
            let url = try #require(object["url"] as? String)
            let session = try #require(object["session"] as? [String: String])

            let browser = PageVisitor(server)
            let page = try await browser.get(String(url.dropFirst(server.base.count)))
            let attempt = try #require(page.hidden("attempt"), "\(page.text.prefix(400))")
            _ = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", "alice")])
            let request = try #require(try await alice.kit.pendingRequests().first)
            _ = try await alice.kit.approve(try await alice.kit.details(for: request))
            let back = try await browser.post("/authorize/continue", [("attempt", attempt)])
            let callback = try #require(back.header("Location"))

            let sessionJSON = String(decoding: try JSONSerialization.data(withJSONObject: session), as: UTF8.self)
            let finished = try await ChildProcess.run(
                python, ["-c", Self.driver] + settings + ["finish", sessionJSON, callback], environment: environment)
            let claims = try #require(try JSONSerialization.jsonObject(with: Data(finished.utf8)) as? [String: Any])
            #expect(claims["sub"] as? String == alice.userID)
            #expect(claims["nonce"] as? String == session["nonce"])
            #expect(claims["iss"] as? String == server.base)
        }
    }
}
