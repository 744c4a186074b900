import Foundation
import Testing
@testable import CountersignServer

/// Every answer says its media type is not to be sniffed, and a server at an https public URL
/// tells browsers to come back over TLS only (`SecurityHeadersMiddleware`).
@Suite("Security headers")
struct SecurityHeadersTests {
    /// Answers of every kind: JSON from each surface, errors among them, a page and plain text.
    static let requests: [(method: String, path: String, form: String?)] = [
        ("POST", "/authorize/wait", "handle=unknown"),
        ("POST", "/account/passkeys/options", ""),
        ("POST", "/token", "grant_type=authorization_code"),
        ("GET", "/no/such/path", nil),
        ("GET", "/admin/v1/tenants", nil),
        ("GET", "/.well-known/openid-configuration", nil),
        ("GET", "/jwks", nil),
        ("GET", "/device/v1/self", nil),
        ("GET", "/authorize", nil),
        ("GET", "/healthz", nil),
        ("GET", "/metrics", nil),
        ("DELETE", "/token", nil),
    ]

    static func send(_ server: TestServer, _ method: String, _ path: String, form: String?) async throws -> TestServer.Answer {
        guard let form else { return try await server.call(method, path) }
        return try await server.call(method, path, body: Data(form.utf8),
                                     headers: ["Content-Type": "application/x-www-form-urlencoded"])
    }

    @Test("at an https public URL every answer carries nosniff and Strict-Transport-Security for a year",
          arguments: requests.map { "\($0.method) \($0.path)" })
    func httpsAnswersCarryBoth(request: String) async throws {
        let entry = try #require(Self.requests.first { "\($0.method) \($0.path)" == request })
        try await TestServer.routed { server in
            let answer = try await Self.send(server, entry.method, entry.path, form: entry.form)
            #expect(answer.header("X-Content-Type-Options") == "nosniff", "\(request): \(answer.status)")
            #expect(answer.header("Strict-Transport-Security") == "max-age=31536000", "\(request): \(answer.status)")
        }
    }

    @Test("at an http public URL answers carry nosniff and no Strict-Transport-Security")
    func httpAnswersCarryNoHSTS() async throws {
        try await TestServer.routed(configure: { $0.publicURL = URL(string: "http://localhost:8080") }) { server in
            for entry in Self.requests {
                let answer = try await Self.send(server, entry.method, entry.path, form: entry.form)
                #expect(answer.header("X-Content-Type-Options") == "nosniff", "\(entry.method) \(entry.path)")
                #expect(answer.header("Strict-Transport-Security") == nil, "\(entry.method) \(entry.path)")
            }
        }
    }
}
