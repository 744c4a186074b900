import CountersignCore
import Foundation

/// What the approval loop (`ApprovalService`) reads and writes, and nothing else: a user's
/// devices, the request with what was sealed for each device and the pushes that announce it,
/// a device's inbox, the one recorded decision with everything that must happen with it, and
/// the sweep of expired requests.
protocol ApprovalStore: RiskSignalSource {
    /// The user's active devices, at most `limit`.
    func devices(userID: String, limit: Int) async throws -> [Device]
    /// The ids of the groups the user is in.
    func groupIDs(userID: String) async throws -> Set<String>
    /// Stores the request, its deliveries and its pushes in one transaction, if `limit` admits
    /// it: the user's requests of its window are counted under a lock on the user, so that two
    /// nodes counting at once cannot both let a request over the limit through.
    func start(_ transaction: ApprovalTransaction, deliveries: [ApprovalDelivery], pushes: [PushOutboxEntry],
               audit: [AuditEvent], userID: String, limit: UserRequestLimit, at date: Date) async throws -> ApprovalAdmission
    /// Records what the risk rules did to a request that was not started (a `deny`, or a dry run's
    /// findings for a request refused otherwise).
    func record(_ audit: [AuditEvent]) async throws
    /// The device's undecided, unexpired requests, newest first.
    func inbox(deviceID: String, at date: Date, limit: Int) async throws -> [PendingRequestEnvelope]
    /// What was sealed for the device, with its request and every device it was sealed for.
    func delivery(requestID: String, deviceID: String) async throws -> AnswerableDelivery?
    func request(id: String) async throws -> ApprovalTransaction?
    /// Records the decision if the request is still pending and unexpired, in one transaction
    /// with the answering call's nonce (`DeviceRequestError.replayed` if it was used) and its
    /// effects, as the flow built them; nil if it was not pending, and then nothing is written.
    func decide(_ decision: ApprovalDecision) async throws -> RecordedDecision?
    /// Deletes what has expired; returns how many requests went.
    func sweep(undecidedBefore: Date, decidedBefore: Date, windowsBefore: Date) async throws -> Int
}

/// Whether a new request was let through the user's per-minute limit.
enum ApprovalAdmission: Sendable, Equatable {
    case admitted
    /// `retryAfter` seconds until the oldest request of the minute leaves it.
    case limited(retryAfter: Int)
}

/// The most requests a user is sent in a minute (the tenant's `user_requests_per_minute`), and
/// its rule; the store counts, under a lock, and asks.
struct UserRequestLimit: Sendable, Equatable {
    /// 0: no limit.
    let perMinute: Int

    static let none = UserRequestLimit(perMinute: 0)

    /// Where the counted window starts for a request at `date`: the minute before it.
    func windowStart(at date: Date) -> Date { date.addingTimeInterval(-60) }

    /// A request at `date` is let through while fewer than `perMinute` of the user's requests
    /// fall in its window; otherwise it may be retried when the window's oldest leaves it.
    func admission(recent count: Int, oldest: Date?, at date: Date) -> ApprovalAdmission {
        guard perMinute > 0, count >= perMinute else { return .admitted }
        let freed = (oldest ?? date).addingTimeInterval(60)
        return .limited(retryAfter: max(1, Int(freed.timeIntervalSince(date).rounded(.up))))
    }
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
    /// The device's signed response, kept as the receipt.
    let response: String
    let factors: [String]
    let reason: DenyReason?
    /// The answering call's nonce, recorded in the same commit (`AnswerNonce.forCommit`); nil
    /// when it was recorded already.
    let nonce: DeviceNonce?
    let at: Date
    /// What the decision does besides, written with it or not at all.
    let effects: DecisionEffects
}

/// What recording a decision does besides, built by the flow (`DecisionEffects.of`) and only
/// committed by the store, in the decision's transaction.
struct DecisionEffects: Sendable {
    /// The other devices' alerts are taken down: pushes not yet sent are not sent, and each
    /// device that was alerted is sent a withdrawal (`withdrawals(alerted:)`).
    let withdrawFrom: Withdrawal
    let audit: AuditEvent
    /// The relying party's ping or push (`ClientNotification.announcing`); nil in poll mode.
    let notification: ClientNotification?
    /// "I did not request this": the report (`NotRequestedReport`) under the tenant's policy.
    let notRequested: AuthenticationPolicy?
    /// The request closes for every device it was sealed for, on every node.
    let closed: RequestClosed
    let deviceIDs: [String]

    struct Withdrawal: Sendable {
        let transaction: ApprovalTransaction
        let decidingDevice: String

        /// The withdrawal pushes for the devices whose alerts went out.
        func pushes(alerted: [(deviceID: String, provider: PushRegistration.Provider)], at date: Date) -> [PushOutboxEntry] {
            alerted.map { other in
                .queued(.withdraw, transactionID: transaction.id, tenantID: transaction.tenantID, deviceID: other.deviceID,
                        provider: other.provider, expiresAt: transaction.expiresAt, at: date)
            }
        }
    }

    /// The effects of `device` deciding `transaction` as `status` at `date`: the audit record
    /// (with the factors, a deny reason and what the custom verifier said), the relying party's
    /// notification, the report for `notRequested`, and the close.
    static func of(
        _ transaction: ApprovalTransaction, status: ApprovalTransaction.Status, by device: Device, factors: [String],
        reason: DenyReason?, verifierReason: String?, deviceIDs: [String], policy: AuthenticationPolicy, at date: Date
    ) -> DecisionEffects {
        DecisionEffects(
            withdrawFrom: Withdrawal(transaction: transaction, decidingDevice: device.id),
            audit: AuditLog.event(
                status == .approved ? "approval.approved" : "approval.denied", actor: "device:\(device.id)",
                tenantID: transaction.tenantID, target: ("approval", transaction.id),
                details: ["client_id": transaction.clientID, "user_id": transaction.userID,
                          "factors": factors.joined(separator: " "), "reason": reason?.rawValue ?? "",
                          "verifier_reason": verifierReason ?? ""].filter { !$0.value.isEmpty },
                at: date),
            notification: ClientNotification.announcing(transaction, status: status, at: date),
            notRequested: reason == .notRequested ? policy : nil,
            closed: RequestClosed(id: transaction.id, status: status.rawValue), deviceIDs: deviceIDs)
    }
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

    func groupIDs(userID: String) async throws -> Set<String> {
        try await GroupReferences.groupIDs(of: userID, on: database)
    }

    func devices(userID: String, limit: Int) async throws -> [Device] {
        try await devices.list(userID: userID, after: nil, limit: limit, on: database)
    }

    func approvedFrom(network: String, userID: String, since date: Date) async throws -> Bool {
        try await approvals.approved(userID: userID, fromNetwork: network, since: date, on: database)
    }

    func denials(userID: String, since date: Date) async throws -> Int {
        try await approvals.countDenied(userID: userID, since: date, on: database)
    }

    func approvedFrom(agent: String, userID: String, since date: Date) async throws -> Bool {
        try await approvals.approved(userID: userID, fromAgent: agent, since: date, on: database)
    }

    func lastDeviceActivity(userID: String) async throws -> Date? {
        try await devices.list(userID: userID, after: nil, limit: ApprovalService.maximumDevicesPerUser, on: database)
            .filter { $0.status == .active }.map { $0.lastSeenAt ?? $0.createdAt }.max()
    }

    func requests(userID: String, since date: Date) async throws -> Int {
        try await approvals.countAll(userID: userID, since: date, on: database)
    }

    func record(_ events: [AuditEvent]) async throws {
        guard !events.isEmpty else { return }
        let writes = SQLStatementCollector(dialect: database.dialect)
        for event in events { try await audit.append(event, on: writes) }
        try await database.run(atomically: writes.take())
    }

    func start(_ transaction: ApprovalTransaction, deliveries: [ApprovalDelivery], pushes: [PushOutboxEntry],
               audit events: [AuditEvent], userID: String, limit: UserRequestLimit, at date: Date) async throws
        -> ApprovalAdmission {
        // The request, its deliveries, its pushes, what the risk rules did and its announcement
        // are written together: one statement on PostgreSQL.
        let writes = SQLStatementCollector(dialect: database.dialect)
        try await approvals.insert(transaction, deliveries: deliveries, on: writes)
        try await pushOutbox.enqueue(pushes, on: writes)
        for event in events { try await audit.append(event, on: writes) }
        try await cluster.announceRequest(transaction.id, deviceIDs: deliveries.map(\.deviceID), on: writes)
        let statements = writes.take()
        guard limit != .none else {
            // With no limit to count against, that one statement needs no transaction.
            try await database.run(atomically: statements)
            return .admitted
        }
        return try await database.transaction { executor in
            // The user's row is locked first, so that two nodes counting at once cannot both
            // let the request over the limit through.
            try await users.lockForRequest(userID: userID, on: executor)
            let recent = try await approvals.countRequests(userID: userID, since: limit.windowStart(at: date), on: executor)
            let admission = limit.admission(recent: recent.count, oldest: recent.oldest, at: date)
            if admission == .admitted { try await executor.run(together: statements) }
            return admission
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
        let effects = decision.effects
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
            let alerted = try await pushOutbox.cancelRequests(
                transactionID: transaction.id, decidingDevice: effects.withdrawFrom.decidingDevice, at: now, on: executor)
            // What is left only writes (but for the rare report, which reads the user): one
            // statement on PostgreSQL.
            let writes = SQLStatementCollector(dialect: executor.dialect)
            try await pushOutbox.enqueue(effects.withdrawFrom.pushes(alerted: alerted, at: now), on: writes)
            try await audit.append(effects.audit, on: writes)
            if let notification = effects.notification {
                try await clientNotifications.enqueue([notification], on: writes)
            }
            if let policy = effects.notRequested {
                try await executor.run(together: writes.take())
                try await notRequested.record(transaction, device: decision.device, policy: policy, at: now, on: executor)
            }
            try await cluster.announceClosed(effects.closed, deviceIDs: effects.deviceIDs, on: writes)
            try await executor.run(together: writes.take())
            return RecordedDecision(withdrawalsQueued: !alerted.isEmpty)
        }
    }

    func sweep(undecidedBefore: Date, decidedBefore: Date, windowsBefore: Date) async throws -> Int {
        let deleted = try await approvals.purge(undecidedBefore: undecidedBefore, decidedBefore: decidedBefore, on: database)
        try await clientRequestWindows.purge(startedBefore: windowsBefore, on: database)
        return deleted
    }
}
