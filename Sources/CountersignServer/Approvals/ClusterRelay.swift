import CountersignCore
import Foundation
import Logging
import ServiceLifecycle

/// Carries live-stream wake-ups between server nodes that share one PostgreSQL database: a
/// request created on node A reaches a device whose stream is held by node B within
/// milliseconds. Node A announces the request's id and devices with NOTIFY; every node
/// LISTENs, and a node holding a stream for one of those devices reads that device's sealed
/// details from the database and sends them down the stream. On SQLite (one node) it does nothing.
public struct ClusterRelay: Sendable {
    static let channel = "countersign_approvals"

    /// One announcement. Small on purpose: NOTIFY payloads are limited to 8,000 bytes.
    struct Message: Codable, Sendable, Equatable {
        enum Kind: String, Codable, Sendable { case request, closed }
        var node: String
        var kind: Kind
        var requestID: String
        var status: String?
        var deviceIDs: [String]

        enum CodingKeys: String, CodingKey {
            case node, kind, status
            case requestID = "request_id"
            case deviceIDs = "device_ids"
        }
    }

    /// This process, so that it skips its own announcements (it has already woken its streams).
    let node = UUID().uuidString
    let database: any Database
    let events: ApprovalEvents
    let logger: Logger

    var isActive: Bool { database.dialect == .postgres }

    /// Tells the other nodes about a new request; best effort, like every wake-up.
    func announceRequest(_ requestID: String, deviceIDs: [String]) async {
        await announce(Message(node: node, kind: .request, requestID: requestID, status: nil, deviceIDs: deviceIDs))
    }

    /// Tells the other nodes a request was decided.
    func announceClosed(_ closed: RequestClosed, deviceIDs: [String]) async {
        await announce(Message(node: node, kind: .closed, requestID: closed.id, status: closed.status, deviceIDs: deviceIDs))
    }

    private func announce(_ message: Message) async {
        guard isActive else { return }
        do {
            let payload = String(decoding: try JSONEncoder().encode(message), as: UTF8.self)
            try await database.run("SELECT pg_notify(\(Self.channel), \(payload)) IS NULL AS sent")
        } catch {
            logger.warning("could not announce a request to the other nodes", metadata: ["error": "\(ErrorMiddleware.describe(error))"])
        }
    }

    /// Handles one announcement from another node.
    func receive(_ payload: String, approvals: any ApprovalTransactionRepository) async {
        guard let message = try? JSONDecoder().decode(Message.self, from: Data(payload.utf8)), message.node != node else {
            return
        }
        for deviceID in message.deviceIDs where events.hasSubscribers(deviceID: deviceID) {
            switch message.kind {
            case .closed:
                events.publish(.closed(RequestClosed(id: message.requestID, status: message.status ?? "closed")), to: deviceID)
            case .request:
                guard let found = try? await approvals.delivery(
                    transactionID: message.requestID, deviceID: deviceID, on: database),
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
                    try await relay.database.listen(channel: ClusterRelay.channel) { payload in
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
