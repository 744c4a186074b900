import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// Nobody can keep a user out by naming them (ASVS 2.2.1): sign-ins from browsers the user
/// never signed in with are limited on their own (`SignInPushLimits`) and spend nothing of the
/// user's requests per minute, so the user's own browser, their passkeys and their relying
/// parties still get through.
@Suite("Sign-in: strangers naming a user cannot lock them out")
struct SignInLockoutTests {
    /// A sign-in for `username` in `browser` up to the page that answers the username.
    static func nameUser(_ username: String, in browser: PageVisitor, client: CodeFlowClient) async throws -> TestServer.Answer {
        let page = try await browser.get("/authorize" + TestServer.authorizationQuery(
            client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()), extra: [("prompt", "login")]))
        let attempt = try #require(page.hidden("attempt"), "\(page.text.prefix(300))")
        return try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", username)])
    }

    @Test("Strangers' sign-ins push at most three times in ten minutes; the relying party and the user's own browser still get through")
    func strangersCannotSpendTheUsersBudget() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let alice = try await server.enrolledUser("alice")
            // alice signs in once in her own browser, which is then hers.
            let own = PageVisitor(server)
            _ = try await server.signIn(own, client: client, user: alice, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            // That first sign-in came from a browser she had not used: it counted as a stranger's.
            server.clock.advance(by: SignInPushLimits.window + 1)
            let before = try await alice.kit.pendingRequests().count

            var answers: [TestServer.Answer] = []
            for _ in 0..<6 { answers.append(try await Self.nameUser("alice", in: PageVisitor(server), client: client)) }
            #expect(answers.prefix(SignInPushLimits.perUser).allSatisfy { $0.text.contains("Approve on your phone") },
                    "\(answers.map { "\($0.status) \($0.text.prefix(200))" })")
            #expect(answers.dropFirst(SignInPushLimits.perUser).allSatisfy {
                $0.status == 429 && $0.text.contains("Too many sign-in requests")
            }, "\(answers.map(\.status))")
            #expect(try await alice.kit.pendingRequests().count == before + SignInPushLimits.perUser, "no push past the limit")

            // The relying party's requests are the user's budget, untouched by the strangers.
            let ciba = try await server.createClient()
            for _ in 0..<3 {
                let started = try await server.bcAuthorize(ciba, [("scope", "openid"), ("login_hint", "alice")])
                #expect(started.status == 200, "bc-authorize: \(started.error ?? "") \(started.errorDescription ?? "")")
            }
            // And alice's own browser still sends her a request.
            let mine = try await Self.nameUser("alice", in: own, client: client)
            #expect(mine.text.contains("Approve on your phone"), "\(mine.status) \(mine.text.prefix(300))")

            // Ten minutes later strangers may try again.
            server.clock.advance(by: SignInPushLimits.window + 1)
            let later = try await Self.nameUser("alice", in: PageVisitor(server), client: client)
            #expect(later.text.contains("Approve on your phone"))
        }
    }

    @Test("One address naming one user after another from fresh browsers is limited after ten")
    func oneAddressCannotNameEveryone() async throws {
        // Listening: every request comes from 127.0.0.1.
        try await TestServer.with(.sqlite) { server in
            let client = try await server.createCodeFlowClient()
            var statuses: [Int] = []
            for index in 0...SignInPushLimits.perAddress {
                _ = try await server.enrolledUser("user\(index)")
                statuses.append(try await Self.nameUser("user\(index)", in: PageVisitor(server), client: client).status)
            }
            #expect(statuses == Array(repeating: 200, count: SignInPushLimits.perAddress) + [429], "\(statuses)")
        }
    }

    @Test("One browser or one address naming one user after another is limited too")
    func oneBrowserCannotNameEveryone() async throws {
        try await TestServer.routed { server in
            let client = try await server.createCodeFlowClient()
            let stranger = PageVisitor(server)
            var statuses: [Int] = []
            for index in 0..<5 {
                _ = try await server.enrolledUser("user\(index)")
                statuses.append(try await Self.nameUser("user\(index)", in: stranger, client: client).status)
            }
            #expect(statuses == [200, 200, 200, 429, 429], "\(statuses)")
        }
    }
}
