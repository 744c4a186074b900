import CountersignCore
import Foundation
import Logging
import ServiceLifecycle

/// Carries live-stream wake-ups between server nodes that share one PostgreSQL database: a
/// request created on node A reaches a device whose stream is held by node B within
/// milliseconds. Node A announces the request's id and devices with NOTIFY; every node
/// LISTENs, and a node holding a stream for one of those devices reads that device's sealed
/// details from the database and sends them down the stream. A security notice travels the
/// same way (`LiveNotices`). The same channel tells every node,
/// the announcing one included, which cached records changed (`RecordCaches`). On SQLite (one
/// node) it does nothing.
public struct ClusterRelay: Sendable {
    static let channel = "countersign_approvals"

    /// One announcement. Small on purpose: NOTIFY payloads are limited to 8,000 bytes.
    struct Message: Codable, Sendable, Equatable {
        enum Kind: String, Codable, Sendable { case request, closed, changed, notice }
        var node: String
        var kind: Kind
        /// `request` and `closed`: the request, and the devices it was sealed for.
        var requestID: String?
        var status: String?
        var deviceIDs: [String]?
        /// `changed`: the record that changed.
        var record: ChangedRecord?
        /// `notice`: the notice, shown to the devices in `deviceIDs`.
        var noticeID: String?

        enum CodingKeys: String, CodingKey {
            case node, kind, status, record
            case requestID = "request_id"
            case deviceIDs = "device_ids"
            case noticeID = "notice_id"
        }
    }

    /// This process, so that it skips its own announcements (it has already woken its streams).
    let node = UUID().uuidString
    let database: any Database
    let events: ApprovalEvents
    let caches: RecordCaches
    let logger: Logger

    var isActive: Bool { database.dialect == .postgres }

    /// Tells the other nodes about a new request, on the transaction that stores it: PostgreSQL
    /// delivers a NOTIFY when that transaction commits (and never if it rolls back), so no node
    /// is woken for a request it cannot read yet, and the announcement costs no round trip of
    /// its own.
    func announceRequest(_ requestID: String, deviceIDs: [String], on executor: any SQLExecutor) async throws {
        try await announce(Message(node: node, kind: .request, requestID: requestID, status: nil, deviceIDs: deviceIDs),
                           on: executor)
    }

    /// Tells the other nodes a request was decided, on the transaction that records the decision.
    func announceClosed(_ closed: RequestClosed, deviceIDs: [String], on executor: any SQLExecutor) async throws {
        try await announce(
            Message(node: node, kind: .closed, requestID: closed.id, status: closed.status, deviceIDs: deviceIDs),
            on: executor)
    }

    /// Tells every node, this one included, to forget a cached record, on the transaction that
    /// changes it: the NOTIFY arrives once the change is committed, so no node reads the old row
    /// again after it. This node also forgets it at once.
    func announceChanged(_ record: ChangedRecord, on executor: any SQLExecutor) async throws {
        caches.forget(record)
        try await announce(Message(node: node, kind: .changed, record: record), on: executor)
    }

    /// Tells the other nodes of a security notice for these devices, on the transaction that
    /// records it (this node's streams hear of it when that transaction commits).
    func announceNotice(_ noticeID: String, deviceIDs: [String], on executor: any SQLExecutor) async throws {
        try await announce(Message(node: node, kind: .notice, deviceIDs: deviceIDs, noticeID: noticeID), on: executor)
    }

    private func announce(_ message: Message, on executor: any SQLExecutor) async throws {
        guard isActive else { return }
        let payload = String(decoding: try JSONEncoder().encode(message), as: UTF8.self)
        try await executor.run("SELECT pg_notify(\(Self.channel), \(payload)) IS NULL AS sent")
    }

    /// Handles one announcement: a changed record from any node, this one included; a request or
    /// a decision from another node.
    func receive(_ payload: String, approvals: any ApprovalTransactionRepository) async {
        guard let message = try? JSONDecoder().decode(Message.self, from: Data(payload.utf8)) else { return }
        if message.kind == .changed, let record = message.record {
            caches.forget(record)
            return
        }
        guard message.node != node else { return }
        if message.kind == .notice, let noticeID = message.noticeID {
            let listening = (message.deviceIDs ?? []).filter(events.hasSubscribers(deviceID:))
            guard !listening.isEmpty,
                  let notice = try? await SQLSecurityNoticeRepository(live: nil).find(ids: [noticeID], on: database)[noticeID]
            else { return }
            for deviceID in listening { events.publish(.notice(notice.item), to: deviceID) }
            return
        }
        guard let requestID = message.requestID else { return }
        for deviceID in message.deviceIDs ?? [] where events.hasSubscribers(deviceID: deviceID) {
            switch message.kind {
            case .closed:
                events.publish(.closed(RequestClosed(id: requestID, status: message.status ?? "closed")), to: deviceID)
            case .changed, .notice:
                continue
            case .request:
                guard let found = try? await approvals.delivery(
                    transactionID: requestID, deviceID: deviceID, on: database),
                    found.transaction.status == .pending else { continue }
                let transaction = found.transaction
                events.publish(.request(PendingRequestEnvelope(
                    id: transaction.id, createdAt: transaction.createdAt, expiresAt: transaction.expiresAt,
                    details: found.delivery.sealed)), to: deviceID)
            }
        }
    }
}

/// Listens for the other nodes' announcements while the server runs, reconnecting after a
/// failure.
struct ClusterRelayListener: Service {
    let relay: ClusterRelay
    let approvals: any ApprovalTransactionRepository

    func run() async throws {
        guard relay.isActive else {
            try? await gracefulShutdown()
            return
        }
        let relay = relay
        let approvals = approvals
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown {
                    // Changes announced while no connection listened were missed: whatever was
                    // cached until the channel is listened to again goes.
                    defer { relay.caches.stoppedHearing() }
                    try await relay.database.listen(channel: ClusterRelay.channel, listening: relay.caches.startedHearing) { payload in
                        await relay.receive(payload, approvals: approvals)
                    }
                }
            } catch {
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
                relay.logger.warning("lost the notification channel; reconnecting", metadata: ["error": "\(ErrorMiddleware.describe(error))"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
