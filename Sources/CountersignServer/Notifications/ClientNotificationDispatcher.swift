import Foundation
import Logging
import ServiceLifecycle

/// Works the client notifications: claims due ones, calls each client's notification endpoint
/// (`ClientNotificationSender`), and records the outcome; and, in push mode, notices requests
/// that expired undecided and queues their `expired_token` error (CIBA §12). It runs on every
/// node that dispatches; on PostgreSQL the claims skip rows other nodes hold.
struct ClientNotificationDispatcher: Service, CustomStringConvertible {
    let store: any ClientNotificationStore
    let sender: ClientNotificationSender
    let configuration: ClientNotificationConfiguration
    /// Signalled by whoever queues notifications on this node.
    let wakeup: PushWakeup
    let logger: Logger
    let now: @Sendable () -> Date
    /// Push-mode expiries are looked for every few seconds, not at every poll: the search is a
    /// write on the requests table, and each node makes it.
    let expirySweep = PeriodicSchedule(every: 5)
    let readFailures = FailureStreak("the client notifications could not be read")
    let sweepFailures = FailureStreak("expired push-mode requests could not be read")

    /// What the service lifecycle logs of it: its name, never what it holds.
    var description: String { "ClientNotificationDispatcher" }

    func run() async throws {
        await OutboxDispatchLoop(
            wakeup: wakeup, workers: .one, batchSize: configuration.batchSize,
            pollInterval: configuration.pollInterval
        ).run {
            if expirySweep.isDue(at: now()) { await queueExpiredPushErrors() }
            return await runOnce()
        }
    }

    /// Claims and sends one batch; returns how many notifications it claimed.
    @discardableResult
    func runOnce() async -> Int {
        let now = now()
        guard let claimed = await readFailures.reading(logger: logger, {
            try await store.claim(limit: configuration.batchSize, at: now, leaseUntil: now.addingTimeInterval(configuration.lease))
        }) else { return 0 }
        await withTaskGroup(of: Void.self) { group in
            for notification in claimed {
                group.addTask { await record(notification, outcome: await sender.send(notification)) }
            }
        }
        return claimed.count
    }

    /// Push mode: a request that expired undecided is announced as `expired_token`, once.
    func queueExpiredPushErrors() async {
        _ = await sweepFailures.reading(logger: logger) {
            try await store.queueExpiredPushErrors(before: now(), limit: configuration.batchSize)
        }
    }

    private func record(_ notification: ClientNotification, outcome: ClientNotificationOutcome) async {
        let now = now()
        var status: ClientNotification.Status
        var next: Date?
        var error: String?
        switch outcome {
        case .delivered:
            status = .sent
        case .refused(let why):
            status = .refused
            error = why
        case .failed(let why):
            status = .failed
            error = why
        case .retry(let why):
            let due = now.addingTimeInterval(configuration.retryDelay(afterAttempts: notification.attempts))
            status = .failed
            error = why
            if notification.attempts < configuration.maximumAttempts, due < notification.giveUpAt { next = due }
        }
        do {
            try await store.record(id: notification.id, status: status, next: next, error: error, at: now)
        } catch {
            logger.error("a client notification's outcome could not be recorded",
                         metadata: ["notification": "\(notification.id)", "error": "\(error)"])
        }
        if status != .sent && next == nil {
            logger.warning("a client notification was not delivered", metadata: [
                "notification": "\(notification.id)", "client_id": "\(notification.clientID)",
                "status": "\(status.rawValue)", "error": "\(error ?? "")"])
        }
    }
}
