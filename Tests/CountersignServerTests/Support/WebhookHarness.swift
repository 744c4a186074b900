import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

extension TestServer {
    /// Runs `body` against a fresh server whose dispatcher polls often, and a receiver checking
    /// signatures by the server's clock; always stops both.
    static func withReceiver(_ engine: Engine, configure: (inout ServerConfiguration) -> Void = { _ in },
                             _ body: (TestServer, WebhookReceiver) async throws -> Void) async throws {
        let clock = TestClock()
        let receiver = try await WebhookReceiver.start(now: clock.function)
        do {
            try await with(engine, clock: clock, configure: { configuration in
                configuration.webhooks.pollInterval = .milliseconds(50)
                configure(&configuration)
            }) { server in
                try await body(server, receiver)
            }
        } catch {
            try? await receiver.stop()
            throw error
        }
        try await receiver.stop()
    }

    /// Runs `body` against a fresh server whose router is driven in memory (`routed`: no
    /// dispatchers), and a receiver checking signatures by the server's clock, for the calls the
    /// server makes while it answers a request (the custom verifier); always stops the receiver.
    static func routedWithReceiver(configure: (inout ServerConfiguration) -> Void = { _ in },
                                   _ body: @Sendable (TestServer, WebhookReceiver) async throws -> Void) async throws {
        let clock = TestClock()
        let receiver = try await WebhookReceiver.start(now: clock.function)
        do {
            try await routed(clock: clock, configure: configure) { server in
                try await body(server, receiver)
            }
        } catch {
            try? await receiver.stop()
            throw error
        }
        try await receiver.stop()
    }

    var defaultTenantID: String { server.defaultTenant.id }

    /// Sets the default tenant's webhook for `purpose` and returns the secret it was given.
    func setWebhook(_ purpose: WebhookPurpose, url: String) async throws -> String {
        let answer = try await admin("PUT", "/admin/v1/tenants/default/webhooks/\(purpose.rawValue)", json: ["url": url])
        #expect(answer.status == 201, "setting the \(purpose.rawValue) webhook: \(answer.errorDescription ?? "")")
        return try #require(answer["secret"] as? String)
    }

    /// Points `purpose` at `receiver` and tells the receiver the secret.
    func connect(_ purpose: WebhookPurpose, to receiver: WebhookReceiver) async throws {
        receiver.expect(secret: try await setWebhook(purpose, url: receiver.url))
    }

    /// Queues an event for the default tenant the way the server's own services do: in a
    /// transaction, through `TenantEvents`.
    @discardableResult
    func enqueueEvent(_ event: String, data: JSONValue) async throws -> Bool {
        let tenantID = defaultTenantID
        let at = clock.now
        let events = tenantEvents
        return try await database.transaction { executor in
            try await events.enqueue(event: event, payload: data, tenantID: tenantID, at: at, on: executor)
        }
    }

    /// The default tenant's queued events, newest first, as the deliveries view shows them.
    func webhookDeliveries() async throws -> [[String: any Sendable]] {
        let answer = try await admin("GET", "/admin/v1/tenants/default/webhooks/events/deliveries")
        #expect(answer.status == 200, "deliveries: \(answer.errorDescription ?? "")")
        return answer["items"] as? [[String: any Sendable]] ?? []
    }
}

/// The data of an `approval.not_requested` event, as the approval service sends it.
func notRequestedData(requestID: String = "txn_01kjpq3m7z0r5w8y6t4v2s1x0a") -> JSONValue {
    .object([
        "request_id": .string(requestID), "user_id": .string("usr_01kjprzb001fz96qkgrcgwfjht"), "username": .string("ada"),
        "client_id": .string("cli_01kjprzb001fz96qkgrcgwfjhv"), "device_id": .string("dev_01kjpwg3pg32p3wwt3y0b8j32h"),
        "decided_at": .string("2026-03-02T09:00:07.120Z"),
    ])
}
