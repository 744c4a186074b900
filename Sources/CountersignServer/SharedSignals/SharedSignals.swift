import CountersignCore
import Foundation
import Synchronization

/// The Shared Signals transmitter's recording half: turns each audit event that says something
/// about a user (`SecurityEventMapping`) into a SET for every stream of the tenant that asked for
/// it, written in the transaction of the change. Nothing is recorded for a tenant without
/// streams beyond one indexed read, and only for the few actions that map to an event.
///
/// ```swift
/// let audit = AuditLog(repository: SQLAuditRepository(), signals: signals)
/// try await audit.record("device.enrolled", …, on: executor) // and the SET is queued with it
/// ```
struct SharedSignals: Sendable {
    let users: any UserRepository
    let devices: any DeviceRepository
    let tenants: any TenantRepository
    let origin: PublicOrigin
    /// Wakes this node's push dispatcher; polls waiting on this node are told by `polls`.
    let pushWakeup: PushWakeup
    let polls: StreamSignal
    let streams = EventStreamRepository()

    /// `typ` of every SET (SSF §4.1.1, RFC 8417 §2.3).
    static let tokenType = "secevent+jwt"

    func record(_ event: AuditEvent, on executor: any SQLExecutor) async throws {
        guard let tenantID = event.tenantID, SecurityEventMapping.actions.contains(event.action) else { return }
        // Reading the streams needs a real transaction: writes collected to run together
        // (`SQLStatementCollector`) answer no rows, and the SET would be silently lost.
        assert(!(executor is SQLStatementCollector), "\(event.action) is audited on collected writes; its SETs need a transaction")
        let receiving = try await streams.receiving(tenantID: tenantID, on: executor)
        guard !receiving.isEmpty else { return }
        var device: Device?
        if event.targetType == "device" { device = try await devices.find(id: event.targetID, on: executor) }
        guard let userID = SecurityEventMapping.userID(of: event) ?? device?.userID else { return }
        let bodies = SecurityEventMapping.bodies(for: event, userID: userID, device: device)
        guard !bodies.isEmpty, let tenant = try await tenants.find(id: tenantID, on: executor) else { return }
        let user = try await users.find(id: userID, tenantID: tenantID, on: executor)
        let issuer = Issuer(tenant: tenant, origin: origin).identifier
        var queued = false
        for stream in receiving {
            guard let subject = Self.subject(userID: userID, email: user?.email, issuer: issuer, format: stream.subjectFormat)
            else { continue }
            for body in bodies where stream.delivers(body.type) {
                try await enqueue(body, subject: subject, issuer: issuer, transaction: event.id, to: stream,
                                  at: event.occurredAt, on: executor)
                queued = true
            }
        }
        if queued { announce(on: executor) }
    }

    /// Queues `body` about `subject` for `stream`: due at once when the stream is enabled, held
    /// while it is paused.
    func enqueue(_ body: SecurityEventBody, subject: JSONValue, issuer: String, transaction: String?,
                 to stream: EventStream, at date: Date, on executor: any SQLExecutor) async throws {
        let id = Identifier.make("set", at: date)
        // `iss` (and an `iss_sub` subject's `iss`) are written again when the SET is signed.
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "jti": .string(id), "iat": .integer(Int64(date.timeIntervalSince1970.rounded(.down))),
            "aud": stream.audience.count == 1 ? .string(stream.audience[0]) : .array(stream.audience.map(JSONValue.string)),
            "sub_id": subject, "events": .object([body.type.rawValue: .object(body.payload)]),
        ]
        if let transaction { claims["txn"] = .string(transaction) }
        let status: StreamEvent.Status = switch (stream.status, stream.deliveryMethod) {
        case (.enabled, .push): .queued
        case (.enabled, .poll): .waiting
        default: .held
        }
        try await streams.enqueue(
            StreamEvent(
                id: id, streamID: stream.id, tenantID: stream.tenantID, eventType: body.type.rawValue,
                claims: JSONValue.object(claims).canonicalString, status: status, attempts: 0, nextAttemptAt: date,
                lastError: nil, createdAt: date, updatedAt: date, sentAt: nil),
            on: executor)
    }

    /// Tells this node's dispatcher and waiting polls, once the transaction commits.
    func announce(on executor: any SQLExecutor) {
        let (push, polls) = (pushWakeup, polls)
        executor.afterCommit {
            push.signal()
            polls.signal()
        }
    }

    /// `sub_id` for the user in the stream's format (RFC 9493 §3.2.2–§3.2.4); nil for `email`
    /// when the user has no address, and the event is then not sent on that stream.
    static func subject(userID: String, email: String?, issuer: String, format: EventStream.SubjectFormat) -> JSONValue? {
        switch format {
        case .issSub:
            return .object(["format": .string("iss_sub"), "iss": .string(issuer), "sub": .string(userID)])
        case .opaque:
            return .object(["format": .string("opaque"), "id": .string(userID)])
        case .email:
            guard let email, !email.isEmpty else { return nil }
            return .object(["format": .string("email"), "email": .string(email)])
        }
    }

    /// `sub_id` of the events about a stream itself (verification, stream-updated): SSF §8.1.4.1.
    static func streamSubject(_ stream: EventStream) -> JSONValue {
        .object(["format": .string("opaque"), "id": .string(stream.id)])
    }
}

/// Wakes every poll waiting on this node when a SET is recorded, so a long poll answers as soon
/// as the transaction commits. A waiter remembers the generation it last saw, so a signal given
/// between its read and its wait is not missed. Polls on other nodes find the SET by re-reading
/// each second.
final class StreamSignal: Sendable {
    private struct State {
        var generation = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextID = 0
        var closed = false
    }

    private let state = Mutex(State())

    var generation: Int { state.withLock { $0.generation } }

    /// Whether the server is shutting down: polls answer at once.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Wakes every waiting poll for good (a graceful shutdown).
    func close() {
        let waiters = state.withLock { state in
            state.closed = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    func signal() {
        let waiters = state.withLock { state in
            state.generation += 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the generation passes `seen`, after `timeout`, or when the task is cancelled.
    func wait(after seen: Int, upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.waitForSignal(after: seen) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal(after seen: Int) async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.generation != seen || state.closed || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
