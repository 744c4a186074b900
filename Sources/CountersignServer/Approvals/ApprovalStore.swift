import CountersignCore
import Foundation

/// What the approval loop (`ApprovalService`) reads and writes, and nothing else: a user's
/// devices, the request with what was sealed for each device and the pushes that announce it,
/// a device's inbox, the one recorded decision with everything that must happen with it, and
/// the sweep of expired requests.
protocol ApprovalStore: Sendable {
    /// The user's active devices, at most `limit`.
    func devices(userID: String, limit: Int) async throws -> [Device]
    /// Stores the request, its deliveries and its pushes in one transaction, if the user has
    /// been sent fewer than `perMinute` requests in the minute before `date` (0: no limit).
    func start(_ transaction: ApprovalTransaction, deliveries: [ApprovalDelivery], pushes: [PushOutboxEntry],
               userID: String, perMinute: Int, at date: Date) async throws -> ApprovalAdmission
    /// The device's undecided, unexpired requests, newest first.
    func inbox(deviceID: String, at date: Date, limit: Int) async throws -> [PendingRequestEnvelope]
    /// What was sealed for the device, with its request and every device it was sealed for.
    func delivery(requestID: String, deviceID: String) async throws -> AnswerableDelivery?
    func request(id: String) async throws -> ApprovalTransaction?
    /// Records the decision if the request is still pending and unexpired, in one transaction
    /// with the withdrawal of the other devices' alerts, the audit record, the relying party's
    /// notification, for "I did not request this" the report, and the answering call's nonce
    /// (`DeviceRequestError.replayed` if it was used); nil if it was not pending.
    func decide(_ decision: ApprovalDecision) async throws -> RecordedDecision?
    /// Records a device call's nonce by itself; false if the device used it already.
    func recordNonce(_ nonce: DeviceNonce) async throws -> Bool
    /// Deletes what has expired; returns how many requests went.
    func sweep(undecidedBefore: Date, decidedBefore: Date, windowsBefore: Date) async throws -> Int
}

/// Whether a new request was let through the user's per-minute limit.
enum ApprovalAdmission: Sendable, Equatable {
    case admitted
    /// `retryAfter` seconds until the oldest request of the minute leaves it.
    case limited(retryAfter: Int)
}

/// What recording a decision queued besides.
struct RecordedDecision: Sendable, Equatable {
    /// Pushes that take down the alerts of the other devices.
    let withdrawalsQueued: Bool
}

/// A device's decision on a request, as it is recorded.
struct ApprovalDecision: Sendable {
    let transaction: ApprovalTransaction
    let status: ApprovalTransaction.Status
    let device: Device
    /// Every device the request was sealed for, whose streams drop it.
    let deviceIDs: [String]
    /// The device's signed response, kept as the receipt.
    let response: String
    let factors: [String]
    let reason: DenyReason?
    /// What the custom verifier said, for the audit record.
    let verifierReason: String?
    /// The tenant's policy, for the "I did not request this" report.
    let policy: AuthenticationPolicy
    /// The answering call's nonce, recorded in the same commit (`replayed` if it was used);
    /// nil when the call recorded it already.
    let nonce: DeviceNonce?
    let at: Date
}

/// The approval loop's store on the server's database (SQLite or PostgreSQL).
struct SQLApprovalStore: ApprovalStore {
    let database: any Database
    let approvals: any ApprovalTransactionRepository
    let devices: any DeviceRepository
    let users: any UserRepository
    let pushOutbox: any PushOutboxRepository
    let clientNotifications: any ClientNotificationRepository
    let clientRequestWindows: any ClientRequestWindowRepository
    let audit: AuditLog
    let notRequested: NotRequestedReport
    /// Tells the other nodes, on the same transaction.
    let cluster: ClusterRelay

    func devices(userID: String, limit: Int) async throws -> [Device] {
        try await devices.list(userID: userID, after: nil, limit: limit, on: database)
    }

    func start(_ transaction: ApprovalTransaction, deliveries: [ApprovalDelivery], pushes: [PushOutboxEntry],
               userID: String, perMinute: Int, at date: Date) async throws -> ApprovalAdmission {
        // The request, its deliveries, its pushes and its announcement are written together: one
        // statement on PostgreSQL.
        let writes = SQLStatementCollector(dialect: database.dialect)
        try await approvals.insert(transaction, deliveries: deliveries, on: writes)
        try await pushOutbox.enqueue(pushes, on: writes)
        try await cluster.announceRequest(transaction.id, deviceIDs: deliveries.map(\.deviceID), on: writes)
        let statements = writes.take()
        guard perMinute > 0 else {
            // With no limit to count against, that one statement needs no transaction.
            try await database.run(atomically: statements)
            return .admitted
        }
        return try await database.transaction { executor in
            // The user's row is locked first, so that two nodes counting at once cannot both
            // let the request over the limit through.
            try await users.lockForRequest(userID: userID, on: executor)
            let recent = try await approvals.countRequests(userID: userID, since: date.addingTimeInterval(-60), on: executor)
            if recent.count >= perMinute {
                let freed = (recent.oldest ?? date).addingTimeInterval(60)
                return .limited(retryAfter: max(1, Int(freed.timeIntervalSince(date).rounded(.up))))
            }
            try await executor.run(together: statements)
            return .admitted
        }
    }

    func inbox(deviceID: String, at date: Date, limit: Int) async throws -> [PendingRequestEnvelope] {
        try await approvals.pending(deviceID: deviceID, at: date, limit: limit, on: database)
    }

    func delivery(requestID: String, deviceID: String) async throws -> AnswerableDelivery? {
        try await approvals.delivery(transactionID: requestID, deviceID: deviceID, on: database)
    }

    func request(id: String) async throws -> ApprovalTransaction? {
        try await approvals.find(id: id, on: database)
    }

    func decide(_ decision: ApprovalDecision) async throws -> RecordedDecision? {
        let transaction = decision.transaction
        let now = decision.at
        return try await database.transaction { executor in
            if let nonce = decision.nonce {
                guard try await devices.recordNonce(
                    deviceID: nonce.deviceID, nonce: nonce.value, expiresAt: nonce.expiresAt, on: executor) else {
                    throw DeviceRequestError.replayed
                }
            }
            guard try await approvals.decide(
                id: transaction.id, status: decision.status, deviceID: decision.device.id, response: decision.response,
                factors: decision.factors, reason: decision.reason, at: now, on: executor) else { return nil }
            // The other devices' alerts are taken down; pushes not yet sent are not sent.
            let alerted = try await pushOutbox.cancelRequests(
                transactionID: transaction.id, decidingDevice: decision.device.id, at: now, on: executor)
            // What is left only writes (but for the rare report, which reads the user): one
            // statement on PostgreSQL.
            let writes = SQLStatementCollector(dialect: executor.dialect)
            try await pushOutbox.enqueue(alerted.map { other in
                .queued(.withdraw, transactionID: transaction.id, tenantID: transaction.tenantID, deviceID: other.deviceID,
                        provider: other.provider, expiresAt: transaction.expiresAt, at: now)
            }, on: writes)
            try await audit.record(
                decision.status == .approved ? "approval.approved" : "approval.denied", actor: "device:\(decision.device.id)",
                tenantID: transaction.tenantID, target: ("approval", transaction.id),
                details: ["client_id": transaction.clientID, "user_id": transaction.userID,
                          "factors": decision.factors.joined(separator: " "), "reason": decision.reason?.rawValue ?? "",
                          "verifier_reason": decision.verifierReason ?? ""].filter { !$0.value.isEmpty },
                at: now, on: writes)
            if let notification = ClientNotification.announcing(transaction, status: decision.status, at: now) {
                try await clientNotifications.enqueue([notification], on: writes)
            }
            if decision.reason == .notRequested {
                try await executor.run(together: writes.take())
                try await notRequested.record(transaction, device: decision.device, policy: decision.policy, at: now, on: executor)
            }
            try await cluster.announceClosed(
                RequestClosed(id: transaction.id, status: decision.status.rawValue), deviceIDs: decision.deviceIDs,
                on: writes)
            try await executor.run(together: writes.take())
            return RecordedDecision(withdrawalsQueued: !alerted.isEmpty)
        }
    }

    func recordNonce(_ nonce: DeviceNonce) async throws -> Bool {
        try await devices.recordNonce(deviceID: nonce.deviceID, nonce: nonce.value, expiresAt: nonce.expiresAt, on: database)
    }

    func sweep(undecidedBefore: Date, decidedBefore: Date, windowsBefore: Date) async throws -> Int {
        let deleted = try await approvals.purge(undecidedBefore: undecidedBefore, decidedBefore: decidedBefore, on: database)
        try await clientRequestWindows.purge(startedBefore: windowsBefore, on: database)
        return deleted
    }
}
