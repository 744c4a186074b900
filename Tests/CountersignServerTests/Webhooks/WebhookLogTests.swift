import CountersignCore
import Foundation
import Logging
import Testing
@testable import CountersignServer

@Suite("Webhook failures are logged without secrets")
struct WebhookLogTests {
    @Test("a verifier without a verdict and an event given up are logged, without the secret, the URL's query or the data")
    func failuresAreLoggedWithoutSecrets() async throws {
        let capture = LogCapture()
        let logger = capture.logger(level: .trace)
        let clock = TestClock()
        let receiver = try await WebhookReceiver.start(now: clock.function)
        let scratch = try await ScratchDatabase.make(.sqlite)
        var configuration = TestServer.configuration(scratch, clock: clock, masterKey: TestServer.randomMasterKey())
        configuration.webhooks.pollInterval = .milliseconds(50)
        configuration.webhooks.maximumAttempts = 1
        let server = try await CountersignServer.make(configuration: configuration, logger: logger)
        let running = try await server.start()
        let test = TestServer(running: running, scratch: scratch, clock: clock, adminKey: try #require(server.bootstrapAdminKey))
        var secrets: [String] = []
        do {
            receiver.answer([], then: .status(500))
            for purpose in WebhookPurpose.allCases {
                let secret = try await test.setWebhook(purpose, url: receiver.url + "?token=receiver-token")
                secrets.append(secret)
                receiver.expect(secret: secret)
                if purpose == .customVerifier {
                    let verdict = await test.server.customVerifier.verify(
                        WebhookCustomVerifierTests.call, tenantID: test.defaultTenantID)
                    #expect(verdict == .unavailable("the custom verifier answered HTTP 500, not 200"))
                } else {
                    try await test.enqueueEvent("approval.not_requested", data: notRequestedData())
                    try await eventually("the event was given up") {
                        try await test.webhookDeliveries().first?["status"] as? String == "failed"
                    }
                }
            }
        } catch {
            try? await running.stop()
            try? await receiver.stop()
            await scratch.destroy()
            throw error
        }
        try await running.stop()
        try await receiver.stop()
        await scratch.destroy()

        let lines = capture.logged(atLeast: .trace).map(\.message)
        let verifier = lines.first { $0.contains("the custom verifier gave no verdict") }
        #expect(verifier?.contains("answered HTTP 500") == true, "\(verifier ?? "no line")")
        let givenUp = lines.first { $0.contains("a webhook event was given up") }
        #expect(givenUp?.contains("the receiver answered HTTP 500") == true, "\(givenUp ?? "no line")")
        for secret in secrets + ["receiver-token", WebhookCustomVerifierTests.call.data] {
            #expect(!lines.contains { $0.contains(secret) }, "\(secret) appeared in the log")
        }
    }
}
