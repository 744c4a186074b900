import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// `user_code` (CIBA §7.1): set by an administrator, never shown back, checked for the clients
/// registered with `backchannel_user_code_parameter`, and locked after five wrong codes. The router
/// is driven in memory; the lockout, counted in storage, also runs on PostgreSQL.
@Suite("user_code")
struct HintUserCodeTests {
    struct Setup: Sendable {
        let server: TestServer
        /// A client registered for user codes.
        let client: TestClient
        let alice: EnrolledUser

        func start(_ userCode: String?) async throws -> TestServer.Answer {
            var parameters = [("scope", "openid"), ("login_hint", "alice")]
            if let userCode { parameters.append(("user_code", userCode)) }
            return try await server.rawForm("/bc-authorize", parameters, basic: client)
        }
    }

    /// Alice with the code `4711`, and a client registered for user codes, on a listening server.
    static func with(_ engine: Engine, code: String? = "4711", _ body: (Setup) async throws -> Void) async throws {
        try await TestServer.with(engine) { server in
            try await body(try await setUp(server, code: code))
        }
    }

    /// The same with the server's router driven in memory.
    static func routed(code: String? = "4711", _ body: @Sendable (Setup) async throws -> Void) async throws {
        try await TestServer.routed { server in
            try await body(try await setUp(server, code: code))
        }
    }

    static func setUp(_ server: TestServer, code: String?) async throws -> Setup {
        let (id, secret) = try await server.registerClient(["backchannel_user_code_parameter": true])
        let alice = try await server.enrolledUser("alice")
        if let code {
            let set = try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(alice.userID)", json: ["user_code": code])
            #expect(set.status == 200, "\(set.errorDescription ?? "")")
        }
        return Setup(server: server, client: TestClient(id: id, secret: try #require(secret)), alice: alice)
    }

    @Test("the right user code lets the request through")
    func rightCode() async throws {
        try await Self.routed { setup in
            let answer = try await setup.start("4711")
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        }
    }

    @Test("no user code for a user who has one is missing_user_code")
    func missingCode() async throws {
        try await Self.routed { setup in
            let answer = try await setup.start(nil)
            #expect(answer.status == 400)
            #expect(answer.error == "missing_user_code")
        }
    }

    @Test("a wrong user code is invalid_user_code")
    func wrongCode() async throws {
        try await Self.routed { setup in
            let answer = try await setup.start("1234")
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_user_code")
            #expect(answer.errorDescription == "user_code is wrong")
        }
    }

    @Test("the fifth wrong code locks the user code for 15 minutes, the right one included", arguments: Engine.available)
    func lockout(engine: Engine) async throws {
        try await Self.with(engine) { setup in
            for attempt in 1...4 {
                #expect(try await setup.start("000\(attempt)").error == "invalid_user_code", "attempt \(attempt)")
            }
            let fifth = try await setup.start("0005")
            #expect(fifth.status == 403)
            #expect(fifth.error == "access_denied")
            #expect(fifth.header("Retry-After") == "900")
            let right = try await setup.start("4711")
            #expect(right.status == 403)
            #expect(right.errorDescription == "too many wrong user codes; the user code is not checked for 900 more seconds")
            let shown = try await setup.server.admin("GET", "/admin/v1/tenants/default/users/\(setup.alice.userID)")
            #expect(shown["user_code_locked_until"] as? String != nil)
            setup.server.clock.advance(by: 900)
            #expect(try await setup.start("4711").status == 200)
        }
    }

    @Test("a right code sets the count of wrong ones back to zero")
    func rightCodeResetsTheCount() async throws {
        try await Self.routed { setup in
            for attempt in 1...4 { _ = try await setup.start("000\(attempt)") }
            #expect(try await setup.start("4711").status == 200)
            for attempt in 1...4 {
                #expect(try await setup.start("000\(attempt)").error == "invalid_user_code", "attempt \(attempt)")
            }
        }
    }

    @Test("for a user without a code none is needed, and one sent is invalid_user_code")
    func userWithoutCode() async throws {
        try await Self.routed(code: nil) { setup in
            #expect(try await setup.start(nil).status == 200)
            let sent = try await setup.start("4711")
            #expect(sent.error == "invalid_user_code")
            #expect(sent.errorDescription == "the user has set no user code; send none")
        }
    }

    @Test("a client not registered for user codes may not send one")
    func unregisteredClient() async throws {
        try await Self.routed { setup in
            let plain = try await setup.server.createClient()
            let answer = try await setup.server.bcAuthorize(plain, [("scope", "openid"), ("login_hint", "alice"), ("user_code", "4711")])
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.errorDescription
                    == "user_code is accepted only from clients registered with backchannel_user_code_parameter")
            #expect(try await setup.server.bcAuthorize(plain, [("scope", "openid"), ("login_hint", "alice")]).status == 200)
        }
    }

    @Test("the user code is stored but never shown; an empty one removes it")
    func codeIsNeverShown() async throws {
        try await Self.routed { setup in
            let path = "/admin/v1/tenants/default/users/\(setup.alice.userID)"
            let shown = try await setup.server.admin("GET", path)
            #expect(shown["user_code_set"] as? Bool == true)
            #expect(!String(decoding: shown.data, as: UTF8.self).contains("4711"))
            #expect(shown["user_code"] == nil)
            let removed = try await setup.server.admin("PATCH", path, json: ["user_code": ""])
            #expect(removed["user_code_set"] as? Bool == false)
            #expect(try await setup.start(nil).status == 200)
        }
    }

    @Test("a user code must have 4 to 64 characters and no control characters",
          arguments: ["123", String(repeating: "9", count: 65), "12\n34", "    "])
    func malformedCode(code: String) {
        #expect(throws: AdminError.invalidField("user_code", "4 to 64 characters without control characters, not only spaces")) {
            try UserCode(code)
        }
    }

    @Test("countersign admin user update --user-code sets the code", .enabled(if: CommandLineTests.executable != nil))
    func commandLine() async throws {
        try await Self.with(.sqlite, code: nil) { setup in
            let environment = ["COUNTERSIGN_SERVER": setup.server.base, "COUNTERSIGN_ADMIN_KEY": setup.server.adminKey]
            let updated = try await CommandLineTests.run(
                ["admin", "user", "update", setup.alice.userID, "--user-code", "4711"], environment: environment)
            #expect(updated.status == 0, "\(updated.output)")
            #expect(!updated.output.contains("4711"))
            #expect(try await setup.start("4711").status == 200)
        }
    }
}
