import Foundation
import Logging
import ServiceLifecycle

/// Works the event outbox: claims due events, posts each, signed, to its tenant's `events`
/// webhook, and records the outcome. A 2xx answer delivers an event; anything else is retried
/// with a doubling delay until `maximumAttempts`, then recorded as failed with the last error.
/// It runs on every node that dispatches; on PostgreSQL the claim skips rows other nodes hold.
/// A node that stops mid-send leaves its rows leased; they are sent again once the lease passes.
struct WebhookDispatcher: Service, CustomStringConvertible {
    let store: any WebhookDeliveryStore
    let client: WebhookHTTPClient
    let configuration: WebhookConfiguration
    /// Signalled by whoever queues events on this node (`TenantEvents`).
    let wakeup: PushWakeup
    let logger: Logger
    let now: @Sendable () -> Date
    let readFailures = FailureStreak("the webhook outbox could not be read")

    /// What the service lifecycle logs of it: its name, never what it holds (the store, which
    /// opens the webhooks' secrets).
    var description: String { "WebhookDispatcher" }

    func run() async throws {
        await OutboxDispatchLoop(
            wakeup: wakeup, workers: .one, batchSize: configuration.batchSize,
            pollInterval: configuration.pollInterval
        ).run { await runOnce() }
    }

    /// Claims and sends one batch; returns how many rows it claimed.
    @discardableResult
    func runOnce() async -> Int {
        let now = now()
        guard let claimed = await readFailures.reading(logger: logger, {
            try await store.claim(limit: configuration.batchSize, at: now, leaseUntil: now.addingTimeInterval(configuration.lease))
        }), !claimed.isEmpty else { return 0 }
        // Each tenant's webhook is looked up once per batch, before the sends fan out.
        var targets: [String: Result<WebhookTarget, WebhookDeliveryFailure>] = [:]
        for tenantID in Set(claimed.map(\.tenantID)) {
            do {
                if let target = try await store.target(tenantID: tenantID, purpose: .events) {
                    targets[tenantID] = .success(target)
                } else {
                    targets[tenantID] = .failure(.removed)
                }
            } catch {
                targets[tenantID] = .failure(.unreadable(String(describing: error)))
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for entry in claimed {
                let target = targets[entry.tenantID] ?? .failure(.removed)
                group.addTask { await deliver(entry, to: target) }
            }
        }
        return claimed.count
    }

    private func deliver(_ entry: WebhookOutboxEntry, to target: Result<WebhookTarget, WebhookDeliveryFailure>) async {
        let failure: WebhookDeliveryFailure?
        switch target {
        case .failure(let reason):
            failure = reason
        case .success(let target):
            do {
                let answer = try await client.post(
                    Data(entry.payload.utf8), to: target, event: entry.event, deliveryID: entry.id, at: now(),
                    timeout: configuration.deliveryTimeout)
                failure = (200..<300).contains(answer.status) ? nil : .status(answer.status)
            } catch {
                failure = .call(error)
            }
        }
        await record(entry, failure: failure)
    }

    private func record(_ entry: WebhookOutboxEntry, failure: WebhookDeliveryFailure?) async {
        let now = now()
        do {
            guard let failure else {
                return try await store.markSent(id: entry.id, at: now)
            }
            if failure.isFinal || entry.attempts >= configuration.maximumAttempts {
                try await store.markFailed(id: entry.id, error: failure.description, at: now)
                logger.warning(
                    "a webhook event was given up",
                    metadata: ["tenant_id": "\(entry.tenantID)", "delivery_id": "\(entry.id)", "event": "\(entry.event)",
                               "attempts": "\(entry.attempts)", "reason": "\(failure)"])
            } else {
                let next = now.addingTimeInterval(configuration.retryDelay(afterAttempts: entry.attempts))
                try await store.reschedule(id: entry.id, next: next, error: failure.description, at: now)
            }
        } catch {
            // The row stays leased and is claimed again when the lease runs out.
            logger.error("a webhook outcome could not be recorded", metadata: ["error": "\(error)"])
        }
    }
}

/// Why an event was not delivered, as recorded in `last_error`.
enum WebhookDeliveryFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The tenant deleted its `events` webhook after the event was queued.
    case removed
    case unreadable(String)
    case call(WebhookCallError)
    case status(Int)

    /// Whether retrying cannot help: with no webhook there is nowhere to send.
    var isFinal: Bool { self == .removed }

    var description: String {
        switch self {
        case .removed: "the tenant no longer has an events webhook"
        case .unreadable(let why): "the events webhook could not be read: \(why)"
        case .call(let error): "\(error)"
        case .status(let status): "the receiver answered HTTP \(status)"
        }
    }
}
