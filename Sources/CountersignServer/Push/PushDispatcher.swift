import CountersignCore
import Foundation
import Logging
import ServiceLifecycle

/// Works the push outbox: claims due rows, sends them concurrently through each tenant's
/// credentials, and records every outcome. It runs on every node; on PostgreSQL the claim skips
/// rows other nodes hold, so nodes share the outbox without sending a row twice. A node that
/// stops mid-send leaves its rows leased; they are sent again once the lease passes.
struct PushDispatcher: Service, CustomStringConvertible {
    let services: ServerServices
    let senders: PushSenders
    let readFailures = FailureStreak("the push outbox could not be read")

    init(services: ServerServices) {
        self.services = services
        self.senders = PushSenders(services: services)
    }

    /// What the service lifecycle logs of it: its name, never the configuration it holds
    /// (which names the master key).
    var description: String { "PushDispatcher" }

    func run() async throws {
        let configuration = services.configuration.push
        await OutboxDispatchLoop(
            wakeup: services.pushWakeup, workers: .pool(configuration.workers), batchSize: configuration.batchSize,
            pollInterval: configuration.pollInterval
        ).run { await runOnce() }
        await senders.shutdown()
    }

    /// Claims and sends one batch; returns how many rows it claimed.
    @discardableResult
    func runOnce() async -> Int {
        let configuration = services.configuration.push
        let outbox = services.repositories.pushOutbox
        let now = services.now()
        let claimed: [PushOutboxEntry]
        let devices: [String: Device]
        let undecided: Set<String>
        do {
            claimed = try await outbox.claim(
                limit: configuration.batchSize, at: now, leaseUntil: now.addingTimeInterval(configuration.lease),
                on: services.database)
            readFailures.succeeded(logger: services.logger)
            guard !claimed.isEmpty else { return 0 }
            devices = try await services.repositories.devices.find(
                ids: Array(Set(claimed.map(\.deviceID))), on: services.database)
            // An alert whose request was answered meanwhile (while an earlier attempt was out)
            // would ask for an answer that is no longer wanted.
            undecided = try await outbox.undecided(
                transactionIDs: Array(Set(claimed.filter { $0.kind == .request }.map(\.transactionID))), on: services.database)
        } catch {
            readFailures.failed(error, logger: services.logger)
            return 0
        }
        // Each credential's sender is looked up once per batch, before the sends fan out.
        var senders: [SenderKey: Result<any PushSender, PushCredentialUnusable>] = [:]
        for entry in claimed where senders[SenderKey(entry)] == nil {
            senders[SenderKey(entry)] = await self.senders.sender(tenantID: entry.tenantID, provider: entry.provider)
        }
        var results: [(PushOutboxEntry, String?, PushOutcome)] = []
        results.reserveCapacity(claimed.count)
        await withTaskGroup(of: (PushOutboxEntry, String?, PushOutcome).self) { group in
            for entry in claimed {
                let device = devices[entry.deviceID]
                let answered = entry.kind == .request && !undecided.contains(entry.transactionID)
                let sender = senders[SenderKey(entry)]
                group.addTask {
                    let token = device?.push?.token
                    if answered {
                        // A row taken over from a node that stopped mid-send may have reached the
                        // device: say so rather than claim it was never sent.
                        let reason = entry.lastError == OutboxTable.cutOffAttempt
                            ? "answered after an attempt whose outcome was lost (its node stopped); it may have been delivered"
                            : "answered before it was sent"
                        return (entry, token, .cancelled(reason: reason))
                    }
                    return (entry, token, await deliver(entry, to: device, through: sender))
                }
            }
            for await result in group { results.append(result) }
        }
        await record(results)
        return claimed.count
    }

    private struct SenderKey: Hashable {
        let tenantID: String
        let provider: PushRegistration.Provider

        init(_ entry: PushOutboxEntry) {
            tenantID = entry.tenantID
            provider = entry.provider
        }
    }

    private func deliver(_ entry: PushOutboxEntry, to device: Device?,
                         through sender: Result<any PushSender, PushCredentialUnusable>?) async -> PushOutcome {
        guard entry.expiresAt > services.now() else {
            return .failed(reason: "the request expired before the notification could be sent")
        }
        guard let device, device.status == .active, let push = device.push, push.provider == entry.provider else {
            return .failed(reason: "the device no longer has a push token for \(entry.provider.rawValue)")
        }
        guard device.pushTokenValid else {
            return .failed(reason: "the device's push token was refused earlier (\(device.pushTokenError ?? "invalid"))")
        }
        switch sender {
        case .success(let sender)?: return await sender.send(entry, deviceToken: push.token)
        case .failure(let unusable)?: return .failed(reason: unusable.reason)
        case nil: return .failed(reason: "no sender was looked up")
        }
    }

    /// Records a batch's outcomes in one transaction: sent rows in a few statements, the rest
    /// one by one (rescheduled, failed, and the push tokens providers called dead).
    private func record(_ results: [(PushOutboxEntry, String?, PushOutcome)]) async {
        let configuration = services.configuration.push
        let now = services.now()
        let outbox = services.repositories.pushOutbox
        var sent: [(id: String, providerMessageID: String?)] = []
        var counts: [String: Int] = [:]
        for (entry, _, outcome) in results {
            if case .delivered(let messageID) = outcome { sent.append((entry.id, messageID)) }
            counts["\(entry.provider.rawValue) \(Self.label(outcome))", default: 0] += 1
        }
        let delivered = sent
        do {
            try await services.database.transaction { executor in
                try await outbox.markSent(delivered, at: now, on: executor)
                for (entry, token, outcome) in results {
                    switch outcome {
                    case .delivered:
                        continue
                    case .failed(let reason):
                        try await outbox.markFailed(id: entry.id, error: reason, at: now, on: executor)
                    case .cancelled(let reason):
                        try await outbox.markCancelled(id: entry.id, reason: reason, at: now, on: executor)
                    case .invalidToken(let reason, let since):
                        try await outbox.markFailed(id: entry.id, error: reason, at: now, on: executor)
                        if let token, try await services.repositories.devices.invalidatePushToken(
                            id: entry.deviceID, token: token, reason: reason, registeredBefore: since, at: now, on: executor) {
                            try await services.audit.record(
                                "device.push_token_invalidated", actor: "system", tenantID: entry.tenantID,
                                target: ("device", entry.deviceID),
                                details: ["provider": entry.provider.rawValue, "reason": reason], at: now, on: executor)
                        }
                    case .retry(let reason, let after):
                        let next = now.addingTimeInterval(
                            configuration.retryDelay(afterAttempts: entry.attempts, providerSaid: after))
                        if entry.attempts >= configuration.maximumAttempts || next >= entry.expiresAt {
                            try await outbox.markFailed(id: entry.id, error: reason, at: now, on: executor)
                        } else {
                            try await outbox.reschedule(id: entry.id, next: next, error: reason, at: now, on: executor)
                        }
                    }
                }
            }
        } catch {
            // The rows stay leased and are claimed again when the lease runs out; they are
            // counted then.
            services.logger.error("push outcomes could not be recorded", metadata: ["error": "\(error)"])
            return
        }
        for (key, count) in counts {
            let parts = key.split(separator: " ")
            services.metrics.pushAttempted(provider: String(parts[0]), outcome: String(parts[1]), count: count)
        }
    }

    private static func label(_ outcome: PushOutcome) -> String {
        switch outcome {
        case .delivered: "delivered"
        case .invalidToken: "invalid_token"
        case .retry: "retry"
        case .failed: "failed"
        case .cancelled: "cancelled"
        }
    }
}
