import CountersignCore
import Foundation
import Logging
import ServiceLifecycle

/// Works the push outbox: claims due rows, sends them concurrently through each tenant's
/// credentials, and records every outcome. It runs on every node; on PostgreSQL the claim skips
/// rows other nodes hold, so nodes share the outbox without sending a row twice. A node that
/// stops mid-send leaves its rows leased; they are sent again once the lease passes.
struct PushDispatcher: Service, CustomStringConvertible {
    let store: any PushDeliveryStore
    let senders: PushSenders
    let configuration: PushConfiguration
    /// Signalled by whoever queues pushes on this node.
    let wakeup: PushWakeup
    let metrics: ServerMetrics
    let logger: Logger
    let now: @Sendable () -> Date
    let readFailures = FailureStreak("the push outbox could not be read")

    /// What the service lifecycle logs of it: its name, never what it holds (the stores, and the
    /// senders with the tenants' credentials).
    var description: String { "PushDispatcher" }

    func run() async throws {
        await OutboxDispatchLoop(
            wakeup: wakeup, workers: .pool(configuration.workers), batchSize: configuration.batchSize,
            pollInterval: configuration.pollInterval
        ).run { await runOnce() }
        await senders.shutdown()
    }

    /// Claims and sends one batch; returns how many rows it claimed.
    @discardableResult
    func runOnce() async -> Int {
        let now = now()
        // The batch, its devices, and which of its requests are still undecided: one read of the
        // streak. An alert whose request was answered meanwhile (while an earlier attempt was
        // out) would ask for an answer that is no longer wanted.
        guard let (claimed, devices, undecided, notices) = await readFailures.reading(logger: logger, {
            let claimed = try await store.claim(
                limit: configuration.batchSize, at: now, leaseUntil: now.addingTimeInterval(configuration.lease))
            guard !claimed.isEmpty else {
                return ([PushOutboxEntry](), [String: Device](), Set<String>(), [String: SecurityNotice]())
            }
            let devices = try await store.devices(ids: Array(Set(claimed.map(\.deviceID))))
            let undecided = try await store.undecided(
                requestIDs: Array(Set(claimed.filter { $0.kind == .request }.compactMap(\.transactionID))))
            let noticeIDs = Set(claimed.compactMap(\.noticeID))
            let notices = noticeIDs.isEmpty ? [:] : try await store.notices(ids: Array(noticeIDs))
            return (claimed, devices, undecided, notices)
        }), !claimed.isEmpty else { return 0 }
        // Each credential's sender is looked up once per batch, before the sends fan out.
        var senders: [SenderKey: Result<any PushSender, PushCredentialUnusable>] = [:]
        for entry in claimed where senders[SenderKey(entry)] == nil {
            senders[SenderKey(entry)] = await self.senders.sender(tenantID: entry.tenantID, provider: entry.provider)
        }
        // What needs no provider is settled here; the rest goes out as one batch per sender.
        var results: [(PushOutboxEntry, String?, PushOutcome)] = []
        results.reserveCapacity(claimed.count)
        var batches: [ObjectIdentifier: (sender: any PushSender, deliveries: [PushDelivery])] = [:]
        for var entry in claimed {
            let device = devices[entry.deviceID]
            let token = device?.push?.token
            if entry.kind == .notice {
                // A notice answered meanwhile ("not me" from another device) needs no alert.
                guard let notice = entry.noticeID.flatMap({ notices[$0] }), notice.reportedAt == nil else {
                    results.append((entry, token, .cancelled(reason: "the notice was answered or removed before it was sent")))
                    continue
                }
                entry.alert = PushContent.alert(for: notice)
            }
            if entry.kind == .request && !undecided.contains(entry.transactionID ?? "") {
                // A row taken over from a node that stopped mid-send may have reached the
                // device: say so rather than claim it was never sent.
                let reason = entry.lastError == OutboxRepository.cutOffAttempt
                    ? "answered after an attempt whose outcome was lost (its node stopped); it may have been delivered"
                    : "answered before it was sent"
                results.append((entry, token, .cancelled(reason: reason)))
                continue
            }
            switch deliverable(entry, to: device, through: senders[SenderKey(entry)]) {
            case .success(let (sender, token)):
                batches[ObjectIdentifier(sender), default: (sender, [])].deliveries
                    .append(PushDelivery(entry: entry, deviceToken: token))
            case .failure(let outcome):
                results.append((entry, token, outcome.outcome))
            }
        }
        await withTaskGroup(of: [(PushOutboxEntry, String?, PushOutcome)].self) { group in
            for (sender, deliveries) in batches.values {
                group.addTask {
                    let outcomes = await sender.send(deliveries)
                    return zip(deliveries, outcomes).map { ($0.entry, $0.deviceToken, $1) }
                }
            }
            for await batch in group { results.append(contentsOf: batch) }
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

    /// Why a notification cannot be sent now, as its outcome.
    private struct NotSendable: Error {
        let outcome: PushOutcome
    }

    /// The sender and device token for a notification, or the outcome of one that cannot go.
    private func deliverable(_ entry: PushOutboxEntry, to device: Device?,
                             through sender: Result<any PushSender, PushCredentialUnusable>?)
        -> Result<(any PushSender, String), NotSendable> {
        guard entry.expiresAt > now() else {
            let what = entry.kind == .notice ? "notice" : "request"
            return .failure(NotSendable(outcome: .failed(reason: "the \(what) expired before the notification could be sent")))
        }
        guard let device, device.status == .active, let push = device.push, push.provider == entry.provider else {
            return .failure(NotSendable(outcome: .failed(
                reason: "the device no longer has a push token for \(entry.provider.rawValue)")))
        }
        guard device.pushTokenValid else {
            return .failure(NotSendable(outcome: .failed(
                reason: "the device's push token was refused earlier (\(device.pushTokenError ?? "invalid"))")))
        }
        switch sender {
        case .success(let sender)?: return .success((sender, push.token))
        case .failure(let unusable)?: return .failure(NotSendable(outcome: .failed(reason: unusable.reason)))
        case nil: return .failure(NotSendable(outcome: .failed(reason: "no sender was looked up")))
        }
    }

    /// Records a batch's outcomes in one transaction: a retry that would come after the
    /// request expires, or past the last attempt, is recorded as failed instead.
    private func record(_ results: [(PushOutboxEntry, String?, PushOutcome)]) async {
        let now = now()
        var sent: [(id: String, providerMessageID: String?)] = []
        var closed: [PushRowOutcome] = []
        var counts: [String: Int] = [:]
        for (entry, token, outcome) in results {
            counts["\(entry.provider.rawValue) \(Self.label(outcome))", default: 0] += 1
            switch outcome {
            case .delivered(let messageID):
                sent.append((entry.id, messageID))
            case .failed(let reason):
                closed.append(.failed(entry, reason: reason))
            case .cancelled(let reason):
                closed.append(.cancelled(entry, reason: reason))
            case .invalidToken(let reason, let since):
                closed.append(.tokenRefused(entry, token: token, reason: reason, since: since))
            case .retry(let reason, let after):
                let next = now.addingTimeInterval(configuration.retryDelay(afterAttempts: entry.attempts, providerSaid: after))
                if entry.attempts >= configuration.maximumAttempts || next >= entry.expiresAt {
                    closed.append(.failed(entry, reason: reason))
                } else {
                    closed.append(.rescheduled(entry, next: next, reason: reason))
                }
            }
        }
        do {
            try await store.record(sent: sent, closed: closed, at: now)
        } catch {
            // The rows stay leased and are claimed again when the lease runs out; they are
            // counted then.
            logger.error("push outcomes could not be recorded", metadata: ["error": "\(error)"])
            return
        }
        for (key, count) in counts {
            let parts = key.split(separator: " ")
            metrics.pushAttempted(provider: String(parts[0]), outcome: String(parts[1]), count: count)
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
