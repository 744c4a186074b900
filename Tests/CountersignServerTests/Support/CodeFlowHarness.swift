import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A relying party of the code flow: its client, its redirect URI, and a fresh PKCE pair.
struct CodeFlowClient: Sendable {
    let id: String
    /// nil for a public client.
    let secret: String?
    let redirectURI: String

    static func verifier() -> String { Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64URLEncodedString }
    static func challenge(_ verifier: String) -> String { Data(SHA256.hash(data: Data(verifier.utf8))).base64URLEncodedString }
}

/// A browser without JavaScript, for the hosted pages driven in memory: keeps the cookies the
/// server sets and reads forms' hidden fields out of the HTML.
final class PageVisitor: @unchecked Sendable {
    let server: TestServer
    private(set) var cookies: [String: String] = [:]
    /// The `User-Agent` it sends, if any.
    var userAgent: String?

    init(_ server: TestServer, userAgent: String? = nil) {
        self.server = server
        self.userAgent = userAgent
    }

    func get(_ path: String) async throws -> TestServer.Answer {
        keep(try await server.call("GET", path, headers: cookieHeader))
    }

    func post(_ path: String, _ form: [(String, String)]) async throws -> TestServer.Answer {
        keep(try await server.form(path, form, headers: cookieHeader))
    }

    private var cookieHeader: [String: String] {
        var headers = [TestServer.redirectsAsAnswers: "1"]
        if let userAgent { headers["User-Agent"] = userAgent }
        if !cookies.isEmpty { headers["Cookie"] = cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }
        return headers
    }

    private func keep(_ answer: TestServer.Answer) -> TestServer.Answer {
        for header in TestServer.Answer.cookies(of: answer) {
            guard let pair = header.split(separator: ";").first else { continue }
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            if parts.count == 2 { cookies[parts[0]] = parts[1].isEmpty ? nil : parts[1] }
        }
        return answer
    }

    func forget(_ name: String) { cookies[name] = nil }

    /// Sets a cookie as another browser's copy of it would be.
    func set(_ name: String, _ value: String) { cookies[name] = value }
}

extension TestServer.Answer {
    var text: String { String(decoding: data, as: UTF8.self) }

    /// Each cookie the answer sets: the router's answers keep one `Set-Cookie` per line,
    /// Foundation's HTTP client joins them with ", " (before the next cookie's name).
    static func cookies(of answer: TestServer.Answer) -> [Substring] {
        guard let header = answer.header("Set-Cookie") else { return [] }
        return header.split(separator: "\n").flatMap { line in
            line.split(separator: /, (?=[A-Za-z0-9_-]+=)/)
        }
    }

    /// The value of the hidden field `name` in the page.
    func hidden(_ name: String) -> String? {
        let pattern = "name=\"\(name)\" value=\"([^\"]*)\""
        guard let range = text.range(of: pattern, options: .regularExpression) else { return nil }
        let match = String(text[range])
        return match.components(separatedBy: "value=\"").last.map { String($0.dropLast()) }
    }

    /// The query parameters of the redirect this answer makes.
    var redirectParameters: [String: String] {
        guard let location = header("Location"), let components = URLComponents(string: location) else { return [:] }
        var parameters: [String: String] = [:]
        for item in components.queryItems ?? [] { parameters[item.name] = item.value }
        return parameters
    }
}

extension TestServer {
    /// A client registered for the code flow: confidential (secret) unless `public`.
    func createCodeFlowClient(
        redirectURI: String = "https://rp.example.com/callback", scopes: [String] = ["openid", "offline_access", "profile"],
        isPublic: Bool = false, extra: [String: any Sendable] = [:], tenant: String = "default"
    ) async throws -> CodeFlowClient {
        var body: [String: any Sendable] = ["name": "Online banking", "scopes": scopes, "redirect_uris": [redirectURI]]
        if isPublic { body["token_endpoint_auth_method"] = "none" }
        for (key, value) in extra { body[key] = value }
        let answer = try await admin("POST", "/admin/v1/tenants/\(tenant)/clients", json: body)
        #expect(answer.status == 201, "client: \(answer.errorDescription ?? "")")
        let client = try #require(answer["client"] as? [String: any Sendable])
        return CodeFlowClient(id: try #require(client["client_id"] as? String), secret: answer["client_secret"] as? String,
                              redirectURI: redirectURI)
    }

    /// The query of an authorization request.
    static func authorizationQuery(_ client: CodeFlowClient, challenge: String, state: String = "xyz",
                                   scope: String = "openid", extra: [(String, String)] = []) -> String {
        "?" + formEncoded([("response_type", "code"), ("client_id", client.id), ("redirect_uri", client.redirectURI),
                           ("scope", scope), ("state", state), ("nonce", "n-0S6_WzA2Mj"),
                           ("code_challenge", challenge), ("code_challenge_method", "S256")] + extra)
    }

    /// The token request of a code, with the client's secret (Basic) or, for a public client, its id.
    func redeem(_ code: String, client: CodeFlowClient, verifier: String, redirectURI: String? = nil) async throws -> Answer {
        var parameters = [("grant_type", "authorization_code"), ("code", code), ("code_verifier", verifier),
                          ("redirect_uri", redirectURI ?? client.redirectURI)]
        guard let secret = client.secret else {
            parameters.append(("client_id", client.id))
            return try await form("/token", parameters)
        }
        return try await form("/token", parameters, basic: TestClient(id: client.id, secret: secret))
    }

    /// Signs `user` in through the hosted pages with `browser`, approving on the phone with the
    /// SDK; returns the redirect that carries the code.
    func signIn(_ browser: PageVisitor, client: CodeFlowClient, user: EnrolledUser, challenge: String,
                scope: String = "openid", extra: [(String, String)] = []) async throws -> Answer {
        let page = try await browser.get(
            "/authorize" + Self.authorizationQuery(client, challenge: challenge, scope: scope, extra: extra))
        #expect(page.status == 200, "authorize: \(page.text.prefix(500))")
        let attempt = try #require(page.hidden("attempt"))
        let waiting = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", user.username)])
        #expect(waiting.text.contains("Approve on your phone"), "\(waiting.text.prefix(800))")
        let request = try #require(try await user.kit.pendingRequests().first)
        _ = try await user.kit.approve(try await user.kit.details(for: request))
        return try await browser.post("/authorize/continue", [("attempt", attempt)])
    }
}
