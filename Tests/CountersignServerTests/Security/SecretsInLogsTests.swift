import CountersignCore
import CountersignKit
import Foundation
import Logging
import Synchronization
import Testing
@testable import CountersignServer

/// Every log line the server writes at trace level, through a first start, enrollment, device
/// calls and client creation, is free of every secret those steps handled.
@Suite("Secrets stay out of logs")
struct SecretsInLogsTests {
    @Test("no secret appears in any log line", arguments: Engine.available)
    func noSecretInLogs(engine: Engine) async throws {
        let capture = LogCapture()
        let logger = capture.logger(level: .trace)
        let scratch = try await ScratchDatabase.make(engine)
        defer { Task { await scratch.destroy() } }
        let clock = TestClock()
        let masterKey = TestServer.randomMasterKey()
        let server = try await CountersignServer.make(
            configuration: TestServer.configuration(scratch, clock: clock, masterKey: masterKey), logger: logger)
        let running = try await server.start()
        let test = TestServer(running: running, scratch: scratch, clock: clock, adminKey: try #require(server.bootstrapAdminKey))

        let userID = try await test.createUser("alice")
        let uri = try await test.enrollmentURI(for: userID)
        let ticket = try EnrollmentURI(parsing: uri).ticket
        let (device, _) = test.authenticator()
        let enrollment = try await device.enroll(uri: uri, deviceName: "phone", platform: .linux)
        _ = try await device.deviceStatus(enrollment.id)
        let client = try await test.admin("POST", "/admin/v1/tenants/default/clients", json: ["name": "rp"])
        let clientSecret = try #require(client["client_secret"] as? String)
        _ = try await test.call("GET", "/admin/v1/tenants/default/users", key: test.adminKey + "wrong")
        try await running.stop()

        let lines = capture.logged(atLeast: .trace).map(\.message)
        #expect(!lines.isEmpty)
        let adminSecret = String(test.adminKey.split(separator: ".")[1])
        for secret in [adminSecret, ticket, clientSecret, masterKey] {
            #expect(!lines.contains { $0.contains(secret) }, "a secret appeared in the log")
        }
    }
}
