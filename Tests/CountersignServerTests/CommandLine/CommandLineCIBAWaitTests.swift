import Foundation
import Testing

/// `countersign ciba auth --wait` and `ciba poll` as an integrator runs them: against the real
/// server, stopped and started again on its port while a request waits, and a wait resumed
/// later by its `auth_req_id`.
@Suite("ciba auth --wait across a restart, and ciba poll")
struct CommandLineCIBAWaitTests {
    static let enabled = DeviceWatchTerminalTests.enabled

    @Test("a restart during the wait is said in words, ridden out while the request is valid, and the tokens come",
          .enabled(if: enabled))
    func waitRidesOutARestart() async throws {
        let scene = try await DeviceWatchTerminalTests.Scene.make()
        defer { scene.end() }
        let waiting = try scene.cibaAuth(["--binding-message", "Sign in across a restart", "--wait"])
        defer { waiting.end() }
        try await waiting.waitFor("Waiting for alice to answer…")
        let requestID = try await scene.pendingRequestID()

        scene.stopServer()
        let down = try await waiting.waitFor("cannot reach \(scene.serverURL): connection refused; trying again in ")
        #expect(!down.contains("error set") && !down.contains("errno"), "\(down)")
        #expect(down.contains("the request can be answered until"), "\(down)")

        try await scene.startServerAgain()
        let approved = try await CommandLineTests.run(["device", "approve", requestID], environment: scene.environment)
        #expect(approved.status == 0, "\(approved.output)")
        try await waiting.waitFor("Reached \(scene.serverURL) again", within: .seconds(60))
        let screen = try await waiting.waitFor("ID token claims:")
        #expect(screen.contains("\"access_token\""), "\(screen)")
        #expect(try await waiting.exit(within: .seconds(10)) == 0, "\(waiting.screen)")
    }

    @Test("ciba poll waits for the tokens of a request sent without --wait, which are handed out once",
          .enabled(if: enabled))
    func pollResumesARequest() async throws {
        let scene = try await DeviceWatchTerminalTests.Scene.make()
        defer { scene.end() }
        let (authReqID, _) = try await scene.sendRequest(["--binding-message", "Sign in later"])
        let approved = try await CommandLineTests.run(["device", "approve", try scene.pendingRequestID()], environment: scene.environment)
        #expect(approved.status == 0, "\(approved.output)")

        let polled = try await CommandLineTests.run(
            ["ciba", "poll", authReqID, "--client-id", scene.clientID], environment: scene.environment)
        #expect(polled.status == 0, "\(polled.output)")
        #expect(polled.output.contains("\"access_token\"") && polled.output.contains("ID token claims:"), "\(polled.output)")

        let again = try await CommandLineTests.run(
            ["ciba", "poll", authReqID, "--client-id", scene.clientID], environment: scene.environment)
        #expect(again.status != 0)
        #expect(again.output.contains("error: invalid_grant"), "\(again.output)")
    }
}
