import CountersignMail
import Foundation
import Logging
import ServiceLifecycle

/// Works the mail outbox: claims due messages, sends each through its tenant's SMTP server, and
/// records the outcome. A server that is down, refuses for now (4xx) or fails TLS or the login
/// is tried again with a doubling delay until `maximumAttempts`; a refusal for good (5xx), a
/// message that cannot be written, or a tenant whose settings are gone fails the message at
/// once, with the reason. It runs on every node that dispatches; on PostgreSQL the claim skips
/// rows other nodes hold.
struct MailDispatcher: Service, CustomStringConvertible {
    let database: any Database
    let sealer: SecretSealer
    let client: SMTPClient
    let configuration: MailConfiguration
    let wakeup: PushWakeup
    let metrics: ServerMetrics
    let logger: Logger
    let now: @Sendable () -> Date
    let readFailures = FailureStreak("the mail outbox could not be read")

    var description: String { "MailDispatcher" }

    private let repository = SQLMailRepository()

    func run() async throws {
        await OutboxDispatchLoop(
            wakeup: wakeup, workers: .one, batchSize: configuration.batchSize, pollInterval: configuration.pollInterval
        ).run { await runOnce() }
    }

    /// Why a message was not sent, as recorded in `last_error`.
    enum Failure: Error, CustomStringConvertible {
        case removed
        case unreadable(String)
        case mail(MailError)

        var isFinal: Bool {
            switch self {
            case .removed: true
            case .unreadable: false
            case .mail(let error): error.isPermanent
            }
        }

        var description: String {
            switch self {
            case .removed: "the tenant no longer has mail settings"
            case .unreadable(let why): "the mail settings could not be read: \(why)"
            case .mail(let error): "\(error)"
            }
        }
    }

    @discardableResult
    func runOnce() async -> Int {
        let now = now()
        guard let claimed = await readFailures.reading(logger: logger, {
            try await repository.claim(limit: configuration.batchSize, at: now,
                                       leaseUntil: now.addingTimeInterval(configuration.lease), on: database)
        }), !claimed.isEmpty else { return 0 }
        // Each tenant's server is read, and its password opened, once per batch.
        var servers: [String: Result<SMTPServer, Failure>] = [:]
        for tenantID in Set(claimed.map(\.tenantID)) {
            do {
                guard let (settings, sealed) = try await repository.settings(tenantID: tenantID, on: database) else {
                    servers[tenantID] = .failure(.removed)
                    continue
                }
                let password = try sealed.map {
                    String(decoding: try sealer.open($0, context: MailAdminRoutes.sealingContext(tenantID: tenantID)),
                           as: UTF8.self)
                }
                servers[tenantID] = .success(settings.server(password: password, timeout: configuration.sendTimeout))
            } catch {
                servers[tenantID] = .failure(.unreadable(String(describing: error)))
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for entry in claimed {
                let server = servers[entry.tenantID] ?? .failure(.removed)
                group.addTask { await send(entry, via: server) }
            }
        }
        return claimed.count
    }

    private func send(_ entry: MailOutboxEntry, via server: Result<SMTPServer, Failure>) async {
        var failure: Failure?
        switch server {
        case .failure(let reason):
            failure = reason
        case .success(let server):
            do throws(MailError) {
                let message = MailMessage(
                    from: try MailAddress(entry.sender), fromName: entry.senderName, to: try MailAddress(entry.recipient),
                    toName: entry.recipientName, subject: entry.subject, text: entry.body, date: entry.createdAt,
                    messageID: "\(entry.id)@\(try MailAddress(entry.sender).domain)")
                try await client.send(message, via: server)
            } catch {
                failure = .mail(error)
            }
        }
        await record(entry, failure: failure)
    }

    private func record(_ entry: MailOutboxEntry, failure: Failure?) async {
        let now = now()
        do {
            guard let failure else {
                try await repository.markSent(id: entry.id, at: now, on: database)
                return metrics.mailAttempted(kind: entry.kind.rawValue, outcome: "sent")
            }
            if failure.isFinal || entry.attempts >= configuration.maximumAttempts {
                try await repository.markFailed(id: entry.id, error: failure.description, at: now, on: database)
                metrics.mailAttempted(kind: entry.kind.rawValue, outcome: "failed")
                logger.warning(
                    "a message was given up",
                    metadata: ["tenant_id": "\(entry.tenantID)", "mail_id": "\(entry.id)", "kind": "\(entry.kind.rawValue)",
                               "attempts": "\(entry.attempts)", "reason": "\(failure)"])
            } else {
                let next = now.addingTimeInterval(configuration.retryDelay(afterAttempts: entry.attempts))
                try await repository.reschedule(id: entry.id, next: next, error: failure.description, at: now, on: database)
                metrics.mailAttempted(kind: entry.kind.rawValue, outcome: "retry")
            }
        } catch {
            // The row stays leased and is claimed again when the lease runs out.
            logger.error("a mail outcome could not be recorded", metadata: ["error": "\(error)"])
        }
    }
}
