import Foundation
import Testing

/// `countersign device watch` answering requests that ask for more than a confirmation: after
/// `y`, the number to match or the PIN is asked right there, on the watch's terminal.
@Suite("device watch asks for the number or the PIN")
struct DeviceWatchChallengeTests {
    static let enabled = DeviceWatchTerminalTests.enabled

    @Test("a number-matching request asks for the number after y, and the right one approves", .enabled(if: enabled))
    func numberIsAskedInTheWatch() async throws {
        let scene = try await DeviceWatchTerminalTests.Scene.make()
        defer { scene.end() }
        let terminal = try await scene.watch()
        defer { terminal.end() }

        let (_, number) = try await scene.sendRequest(["--acr-values", "urn:countersign:acr:number-match"])
        let shownNumber = try #require(number)
        try await terminal.waitFor("Approve? [y/N] ")
        let requestID = try await scene.pendingRequestID()
        terminal.type("y\r")
        let screen = try await terminal.waitFor("Number (empty to cancel): ")
        #expect(!screen.contains("device approve"), "\(screen)")
        terminal.type("\(shownNumber)\r")
        try await terminal.waitFor("\(requestID): approved at")
        terminal.type("\u{3}")
        #expect(try await terminal.exit(within: .seconds(10)) == 0, "\(terminal.screen)")
    }

    @Test("a PIN request asks for the PIN after y without echoing it, and the right PIN approves", .enabled(if: enabled))
    func pinIsAskedInTheWatch() async throws {
        let pin = "472915"
        let scene = try await DeviceWatchTerminalTests.Scene.make(pin: pin)
        defer { scene.end() }
        let terminal = try await scene.watch()
        defer { terminal.end() }

        let asked = try scene.askAlice("Pay 42.00 EUR to ACME", ["--acr-values", "urn:countersign:acr:pin"])
        try await terminal.waitFor("Approve? [y/N] ")
        let requestID = try await scene.pendingRequestID()
        terminal.type("y\r")
        try await terminal.waitFor("PIN (empty to cancel): ")
        terminal.type("\(pin)\r")
        let screen = try await terminal.waitFor("\(requestID): approved at")
        #expect(!screen.contains(pin), "the PIN is not echoed: \(screen)")
        let auth = await asked.value
        #expect(auth.status == 0, "\(auth.output)")
        #expect(auth.output.contains("urn:countersign:acr:pin"), "\(auth.output)")
        terminal.type("\u{3}")
        #expect(try await terminal.exit(within: .seconds(10)) == 0, "\(terminal.screen)")
    }
}
