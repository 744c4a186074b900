import Foundation
import Testing

/// `countersign device approve` and `deny` for a request that is no longer pending: they say
/// what became of it (answered here, and how and when; answered on another device; expired)
/// instead of "no pending request".
@Suite("device approve of a request no longer pending")
struct CommandLineAnsweredRequestTests {
    static let enabled = CommandLineDeviceTests.enabled

    /// A poll client for alice's requests; returns the environment with its credentials.
    static func withClient(_ scene: CommandLineDeviceTests.Scene) async throws -> [String: String] {
        let created = try await scene.run(["admin", "client", "create", "--name", "Demo portal"])
        let client = try #require(try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any])
        return scene.environment.merging([
            "COUNTERSIGN_CLIENT_ID": try #require((client["client"] as? [String: Any])?["client_id"] as? String),
            "COUNTERSIGN_CLIENT_SECRET": try #require(client["client_secret"] as? String),
        ]) { $1 }
    }

    /// Sends alice a request; returns its id as her devices see it.
    static func ask(_ environment: [String: String], _ arguments: [String] = []) async throws -> String {
        let before = try await CommandLineTests.run(["device", "pending"], environment: environment).output
        let asked = try await CommandLineTests.run(
            ["ciba", "auth", "--client-id", try #require(environment["COUNTERSIGN_CLIENT_ID"]), "--user", "alice"] + arguments,
            environment: environment)
        #expect(asked.status == 0, "\(asked.output)")
        let pending = try await CommandLineTests.run(["device", "pending"], environment: environment).output
        let ids = pending.split(whereSeparator: \.isWhitespace).filter { $0.hasPrefix("txn_") && !before.contains($0) }
        return try #require(ids.first.map(String.init), "\(pending)")
    }

    @Test("a request denied here, then approved: says it was denied here, with which command and when", .enabled(if: enabled))
    func answeredHereSaysHowAndWhen() async throws {
        var scene = try await CommandLineDeviceTests.Scene.make()
        defer { scene.end() }
        _ = try await scene.enroll(["--name", "terminal"])
        scene.environment = try await Self.withClient(scene)
        let requestID = try await Self.ask(scene.environment)

        let denied = try await scene.run(["device", "deny", requestID])
        #expect(denied.status == 0, "\(denied.output)")
        let approved = try await scene.run(["device", "approve", requestID])
        #expect(approved.status != 0)
        #expect(approved.output.contains("\(requestID) was already denied (declined) here with `countersign device deny` at 20"),
                "\(approved.output)")
        #expect(!approved.output.contains("no enrollment on this device has a pending request"), "\(approved.output)")
    }

    @Test("a request answered on another device, or expired, says so", .enabled(if: enabled))
    func answeredElsewhereOrExpiredSaysSo() async throws {
        var scene = try await CommandLineDeviceTests.Scene.make()
        defer { scene.end() }
        _ = try await scene.enroll(["--name", "terminal"])
        let otherStore = scene.scratch.appendingPathComponent("other-device").path
        _ = try await scene.enroll(["--name", "phone", "--store", otherStore])
        scene.environment = try await Self.withClient(scene)

        let requestID = try await Self.ask(scene.environment)
        let approvedElsewhere = try await scene.run(["device", "approve", requestID, "--store", otherStore])
        #expect(approvedElsewhere.status == 0, "\(approvedElsewhere.output)")
        let approved = try await scene.run(["device", "approve", requestID])
        #expect(approved.status != 0)
        #expect(approved.output.contains("\(requestID) was already answered (approved or denied) on another device"),
                "\(approved.output)")

        // Long enough for `ciba auth` and `device pending` to run before it expires, which took
        // over two seconds once in a whole debug suite on two cores.
        let expiring = try await Self.ask(scene.environment, ["--requested-expiry", "10"])
        try await eventually("the request leaves the inbox when it expires") {
            try await !scene.run(["device", "pending"]).output.contains(expiring)
        }
        let late = try await scene.run(["device", "approve", expiring])
        #expect(late.status != 0)
        #expect(late.output.contains("\(expiring) expired before it was answered"), "\(late.output)")
    }
}
