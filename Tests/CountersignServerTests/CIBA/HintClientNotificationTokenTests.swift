import Foundation
import Testing
@testable import CountersignServer

/// `client_notification_token` (CIBA §7.1): required from ping and push clients, and of RFC
/// 6750's `b64token` syntax, at most 1,024 characters, from anyone who sends it.
@Suite("client_notification_token")
struct HintClientNotificationTokenTests {
    static let malformed = "client_notification_token must be at most 1024 characters of the RFC 6750 b64token syntax"

    @Test("a ping client must send client_notification_token")
    func requiredForPing() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient(mode: "ping")
            _ = try await server.enrolledUser("alice")
            let without = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "alice")])
            #expect(without.status == 400)
            #expect(without.error == "invalid_request")
            #expect(without.errorDescription == "client_notification_token is required for a client of the ping delivery mode")
            let with = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "alice"), ("client_notification_token", "8d67dc78-7faa-4d41-aabd")])
            #expect(with.status == 200, "\(with.errorDescription ?? "")")
        }
    }

    @Test("a malformed client_notification_token is invalid_request, from a poll client too",
          arguments: [String(repeating: "a", count: 1025), "two words", "=abc", "ab=c", "tök€n", "a\"b"])
    func malformedToken(token: String) async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let answer = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "alice"), ("client_notification_token", token)])
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.errorDescription == Self.malformed)
        }
    }

    @Test("b64token values of up to 1024 characters are accepted",
          arguments: ["abc", "A-Z._~+/09", "YWJj==", String(repeating: "x", count: 1024)])
    func acceptedToken(token: String) throws {
        #expect(try ClientNotificationToken(token).value == token)
    }
}
