import CountersignCore
import Foundation

/// The streams and their SETs: `ssf_streams` and `ssf_events`.
struct EventStreamRepository: Sendable {
    private static let outbox = OutboxRepository(name: "ssf_events")
    private typealias Row = EventStreamRow

    // MARK: Streams

    func insert(_ stream: EventStream, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO ssf_streams (id, tenant_id, owner_key_id, audience, delivery_method, endpoint_url,
                authorization_sealed, events_requested, subject_format, description, status, status_reason,
                verification_requested_at, created_at, updated_at)
            VALUES (\(stream.id), \(stream.tenantID), \(stream.ownerKeyID), \(Self.json(stream.audience)),
                \(stream.deliveryMethod.rawValue), \(stream.endpointURL), \(stream.authorizationSealed),
                \(Self.json(stream.eventsRequested)), \(stream.subjectFormat.rawValue), \(stream.description),
                \(stream.status.rawValue), \(stream.statusReason), \(stream.verificationRequestedAt), \(stream.createdAt),
                \(stream.updatedAt))
            """)
    }

    /// Stores what a receiver may change, and the status.
    func update(_ stream: EventStream, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE ssf_streams
            SET delivery_method = \(stream.deliveryMethod.rawValue), endpoint_url = \(stream.endpointURL),
                authorization_sealed = \(stream.authorizationSealed), events_requested = \(Self.json(stream.eventsRequested)),
                subject_format = \(stream.subjectFormat.rawValue), description = \(stream.description),
                status = \(stream.status.rawValue), status_reason = \(stream.statusReason),
                verification_requested_at = \(stream.verificationRequestedAt), updated_at = \(stream.updatedAt)
            WHERE id = \(stream.id)
            """)
    }

    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> EventStream? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM ssf_streams WHERE id = \(id) AND tenant_id = \(tenantID)", as: Row.self
        )?.stream()
    }

    /// The stream, locked for the rest of the transaction on PostgreSQL (two changes to one
    /// stream at once are applied one after the other).
    func lock(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> EventStream? {
        let forUpdate = executor.dialect == .postgres ? " FOR UPDATE" : ""
        return try await executor.first(
            "SELECT \(raw: Row.columns) FROM ssf_streams WHERE id = \(id) AND tenant_id = \(tenantID)\(raw: forUpdate)",
            as: Row.self
        )?.stream()
    }

    /// A key's streams, oldest first.
    func list(ownerKeyID: String, tenantID: String, on executor: any SQLExecutor) async throws -> [EventStream] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM ssf_streams WHERE tenant_id = \(tenantID) AND owner_key_id = \(ownerKeyID)
            ORDER BY id
            """, as: Row.self
        ).map { try $0.stream() }
    }

    /// Every stream of the tenant, oldest first (the administration view).
    func list(tenantID: String, on executor: any SQLExecutor) async throws -> [EventStream] {
        try await executor.all(
            "SELECT \(raw: Row.columns) FROM ssf_streams WHERE tenant_id = \(tenantID) ORDER BY id", as: Row.self
        ).map { try $0.stream() }
    }

    /// The tenant's streams that take events now or later: enabled and paused ones.
    func receiving(tenantID: String, on executor: any SQLExecutor) async throws -> [EventStream] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM ssf_streams WHERE tenant_id = \(tenantID) AND status IN ('enabled', 'paused')
            """, as: Row.self
        ).map { try $0.stream() }
    }

    func delete(id: String, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM ssf_events WHERE stream_id = \(id)")
        try await executor.run("DELETE FROM ssf_streams WHERE id = \(id)")
    }

    // MARK: Events

    func enqueue(_ event: StreamEvent, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO ssf_events (id, stream_id, tenant_id, event_type, claims, status, attempts, next_attempt_at,
                created_at, updated_at)
            VALUES (\(event.id), \(event.streamID), \(event.tenantID), \(event.eventType), \(event.claims),
                \(event.status.rawValue), \(event.attempts), \(event.nextAttemptAt), \(event.createdAt), \(event.updatedAt))
            """)
    }

    /// A stream enabled again: its held events become due, in the order they were recorded.
    func release(streamID: String, to status: StreamEvent.Status, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE ssf_events SET status = \(status.rawValue), next_attempt_at = \(date), updated_at = \(date)
            WHERE stream_id = \(streamID) AND status = 'held'
            """)
    }

    /// A stream's delivery method changed: its SETs not yet delivered, handed out to a poll and not
    /// acknowledged included, are due at once by the new method.
    func move(streamID: String, to status: StreamEvent.Status, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE ssf_events SET status = \(status.rawValue), next_attempt_at = \(date), updated_at = \(date)
            WHERE stream_id = \(streamID) AND status IN ('queued', 'waiting', 'delivered')
            """)
    }

    /// A stream paused: events not yet out are held.
    func hold(streamID: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE ssf_events SET status = 'held', updated_at = \(date)
            WHERE stream_id = \(streamID) AND status IN ('queued', 'waiting')
            """)
    }

    /// A stream disabled: what it held or had not yet sent is dropped (SSF §8.1.2.1).
    func drop(streamID: String, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            DELETE FROM ssf_events
            WHERE stream_id = \(streamID) AND status IN ('held', 'queued', 'waiting', 'delivered')
            """)
    }

    // Push: the outbox's claim, outcome and retry.

    func claim(limit: Int, at date: Date, leaseUntil: Date, on executor: any SQLExecutor) async throws -> [StreamEvent] {
        try await Self.outbox.claim(limit: limit, at: date, leaseUntil: leaseUntil, as: StreamEvent.self, on: executor)
    }

    func markSent(id: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.outbox.markSent(ids: [id], at: date, on: executor)
    }

    func reschedule(id: String, next: Date, error: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.outbox.reschedule(id: id, next: next, error: error, at: date, on: executor)
    }

    func markFailed(id: String, error: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.outbox.close(id: id, status: StreamEvent.Status.failed, error: error, at: date, on: executor)
    }

    /// A claimed event of a stream paused since (`held`), or changed to poll delivery since
    /// (`waiting`): put there, its attempt not counted.
    func returnClaimed(id: String, to status: StreamEvent.Status, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE ssf_events SET status = \(status.rawValue), attempts = attempts - 1, next_attempt_at = \(date),
                updated_at = \(date)
            WHERE id = \(id) AND status = 'sending'
            """)
    }

    /// A claimed SET not sent because an earlier one of its stream must be retried first: back
    /// in the queue, due with that one, its attempt not counted.
    func requeueClaimed(id: String, due next: Date, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE ssf_events SET status = 'queued', attempts = attempts - 1, next_attempt_at = \(next), updated_at = \(date)
            WHERE id = \(id) AND status = 'sending'
            """)
    }

    // Poll.

    /// Hands out up to `limit` of the stream's SETs, oldest first: those waiting, and those
    /// handed out before whose acknowledgement is overdue. They are delivered, due again at
    /// `redeliverAt` unless acknowledged by then. Another poll at once on PostgreSQL skips the
    /// rows this one takes.
    func poll(streamID: String, limit: Int, at date: Date, redeliverAt: Date, on executor: any SQLExecutor) async throws
        -> [StreamEvent] {
        let skipLocked = executor.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        return try await executor.all(
            """
            UPDATE ssf_events
            SET status = 'delivered', attempts = attempts + 1, next_attempt_at = \(redeliverAt), updated_at = \(date),
                sent_at = \(date)
            WHERE id IN (
                SELECT id FROM ssf_events
                WHERE stream_id = \(streamID) AND status IN ('waiting', 'delivered') AND next_attempt_at <= \(date)
                ORDER BY created_at, id LIMIT \(limit)\(raw: skipLocked))
            RETURNING \(raw: StreamEvent.columns)
            """, as: StreamEvent.self
        ).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// Whether more of the stream's SETs are due now.
    func hasDue(streamID: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            SELECT 1 AS due FROM ssf_events
            WHERE stream_id = \(streamID) AND status IN ('waiting', 'delivered') AND next_attempt_at <= \(date) LIMIT 1
            """)).isEmpty
    }

    /// Acknowledges the stream's SETs whose ids are `ids` (RFC 8936 `ack`), or records the error
    /// the receiver gave for one (`setErrs`); either way it is not handed out again. Returns how
    /// many rows changed.
    @discardableResult
    func acknowledge(streamID: String, ids: [String], error: String?, at date: Date, on executor: any SQLExecutor)
        async throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try await executor.run(chunking: ids) { part in
            """
            UPDATE ssf_events SET status = 'acknowledged', last_error = \(error), updated_at = \(date)
            WHERE stream_id = \(streamID) AND status IN ('delivered', 'waiting') AND id IN (\(list: part))
            RETURNING id
            """
        }.count
    }

    /// Rows whose story is over (sent, acknowledged, failed) before `date`: removed.
    func purge(finishedBefore date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            DELETE FROM ssf_events WHERE status IN ('sent', 'acknowledged', 'failed') AND updated_at < \(date)
            """)
    }

    /// A stream's SETs, newest first, older than `cursor` (a `jti`) if given.
    func recent(streamID: String, before cursor: String?, limit: Int, on executor: any SQLExecutor) async throws
        -> [StreamEvent] {
        try await executor.all(
            """
            SELECT \(raw: StreamEvent.columns) FROM ssf_events
            WHERE stream_id = \(streamID) AND id < \(cursor ?? "~") ORDER BY id DESC LIMIT \(limit)
            """, as: StreamEvent.self)
    }

    /// How many of each stream's events are in each state (for the administration view).
    func counts(tenantID: String, on executor: any SQLExecutor) async throws -> [String: [String: Int]] {
        var counts: [String: [String: Int]] = [:]
        for row in try await executor.run(
            """
            SELECT stream_id, status, COUNT(*) AS n FROM ssf_events WHERE tenant_id = \(tenantID) GROUP BY stream_id, status
            """) {
            let stream = try row.decode(column: "stream_id", as: String.self)
            counts[stream, default: [:]][try row.decode(column: "status", as: String.self)] = Int(
                try row.decode(column: "n", as: Int64.self))
        }
        return counts
    }

    private static func json(_ values: [String]) -> String {
        JSONValue.array(values.map(JSONValue.string)).canonicalString
    }
}
