import CountersignCore
import Foundation

/// The storage the approval loop needs, for the relying-party side (`CIBA/`) and the device side.
public protocol ApprovalTransactionRepository: Sendable {
    func insert(_ transaction: ApprovalTransaction, deliveries: [ApprovalDelivery], on executor: any SQLExecutor) async throws
    func find(authReqIDHash: Data, on executor: any SQLExecutor) async throws -> ApprovalTransaction?
    func find(id: String, on executor: any SQLExecutor) async throws -> ApprovalTransaction?
    /// The delivery of a request to one device, with its transaction; nil if none was made.
    func delivery(transactionID: String, deviceID: String, on executor: any SQLExecutor) async throws
        -> AnswerableDelivery?
    /// The devices a request was sealed for.
    func deviceIDs(transactionID: String, on executor: any SQLExecutor) async throws -> [String]
    /// Which of these requests are still waiting for an answer (asked by push delivery, before it
    /// sends an alert).
    func undecided(ids: [String], on executor: any SQLExecutor) async throws -> Set<String>
    /// The device's pending, unexpired requests, newest first.
    func pending(deviceID: String, at date: Date, limit: Int, on executor: any SQLExecutor) async throws -> [PendingRequestEnvelope]
    /// Records the decision if the request is still pending and unexpired at `date`; false otherwise.
    func decide(id: String, status: ApprovalTransaction.Status, deviceID: String, response: String, factors: [String],
                reason: DenyReason?, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    /// Lets a PIN stand in for the required factor of a pending request (the custom verifier
    /// asked for it).
    func allowPINFallback(id: String, verification: TransactionDetails.Verification, on executor: any SQLExecutor) async throws
    /// Push mode: marks up to `limit` requests that expired undecided before `date`, and whose
    /// client was not told yet, as told, and returns them.
    func claimExpiredPush(before date: Date, limit: Int, on executor: any SQLExecutor) async throws -> [ApprovalTransaction]
    /// How many requests the user was sent since `date`, and when the first of them was made.
    func countRequests(userID: String, since date: Date, on executor: any SQLExecutor) async throws -> (count: Int, oldest: Date?)
    /// The risk rules' questions: whether the user approved a request from `network` since
    /// `date`; how many of their requests made since `date` were denied; how many they were sent.
    func approved(userID: String, fromNetwork network: String, since date: Date, on executor: any SQLExecutor) async throws
        -> Bool
    func approved(userID: String, fromAgent agent: String, since date: Date, on executor: any SQLExecutor) async throws
        -> Bool
    func countDenied(userID: String, since date: Date, on executor: any SQLExecutor) async throws -> Int
    func countAll(userID: String, since date: Date, on executor: any SQLExecutor) async throws -> Int
    /// Records a token request: sets `last_polled_at` and the interval, if `last_polled_at` is
    /// still `previous` (so that of two concurrent polls only one counts as on time).
    func recordPoll(id: String, previous: Date?, at date: Date, interval: Int, on executor: any SQLExecutor) async throws -> Bool
    /// Marks an approved request exchanged for tokens; false if it was not approved or already exchanged.
    func markExchanged(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    /// Marks the approved request exchanged if it was not, and if its user `userID` is still
    /// active, in one statement; false otherwise.
    func markExchanged(id: String, ifUserActive userID: String, at date: Date, on executor: any SQLExecutor) async throws
        -> Bool
    /// Deletes undecided requests that expired before `undecidedBefore` and decided ones older
    /// than `decidedBefore`, with their deliveries; returns how many requests were deleted.
    func purge(undecidedBefore: Date, decidedBefore: Date, on executor: any SQLExecutor) async throws -> Int
}

public struct SQLApprovalTransactionRepository: ApprovalTransactionRepository {
    public init() {}

    private typealias Row = ApprovalTransactionRow

    public func insert(_ transaction: ApprovalTransaction, deliveries: [ApprovalDelivery], on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO approval_transactions (id, auth_req_id_hash, tenant_id, client_id, user_id, scope, acr_values,
                binding_message, details, details_sha256, challenge, status, poll_interval, created_at, expires_at,
                verification, match_number, delivery_mode, auth_req_id_sealed, notification_token_sealed,
                authorization_details, counts_for_user, request_network, request_agent)
            VALUES (\(transaction.id), \(transaction.authReqIDHash), \(transaction.tenantID), \(transaction.clientID),
                \(transaction.userID), \(transaction.scope.joined(separator: " ")),
                \(transaction.acrValues?.joined(separator: " ")), \(transaction.bindingMessage), \(transaction.details),
                \(transaction.detailsDigest), \(transaction.challenge), \(transaction.status), \(transaction.pollInterval),
                \(transaction.createdAt), \(transaction.expiresAt),
                \(try transaction.verification.map { try JSONValue(encoding: $0).canonicalString }),
                \(transaction.matchNumber), \(transaction.deliveryMode == .poll ? nil : transaction.deliveryMode),
                \(transaction.authReqIDSealed), \(transaction.notificationTokenSealed),
                \(transaction.authorizationDetails?.json.canonicalString), \(transaction.countsForUser ? 1 : 0),
                \(transaction.requestNetwork), \(transaction.requestAgent))
            """)
        guard !deliveries.isEmpty else { return }
        // One statement for every device: at most `ApprovalService.maximumDevicesPerUser` rows.
        let rows: [[SQLValue]] = try deliveries.map { delivery in
            [delivery.deviceID.sqlValue, delivery.transactionID.sqlValue,
             try JSONValue(encoding: delivery.sealed).canonicalString.sqlValue]
        }
        try await executor.run(
            "INSERT INTO approval_deliveries (device_id, transaction_id, sealed_details) VALUES \(rows: rows)")
    }

    public func find(authReqIDHash: Data, on executor: any SQLExecutor) async throws -> ApprovalTransaction? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM approval_transactions WHERE auth_req_id_hash = \(authReqIDHash)", as: Row.self
        )?.transaction()
    }

    public func find(id: String, on executor: any SQLExecutor) async throws -> ApprovalTransaction? {
        try await executor.first("SELECT \(raw: Row.columns) FROM approval_transactions WHERE id = \(id)", as: Row.self)?
            .transaction()
    }

    public func delivery(transactionID: String, deviceID: String, on executor: any SQLExecutor) async throws
        -> AnswerableDelivery? {
        guard let row = try await executor.first(
            """
            SELECT \(raw: DeliveryRow.columns), d.sealed_details AS sealed_details,
                (SELECT string_agg(o.device_id, ' ') FROM approval_deliveries o WHERE o.transaction_id = t.id) AS device_ids
            FROM approval_transactions t JOIN approval_deliveries d ON d.transaction_id = t.id
            WHERE t.id = \(transactionID) AND d.device_id = \(deviceID)
            """, as: DeliveryRow.self) else { return nil }
        return AnswerableDelivery(
            delivery: ApprovalDelivery(deviceID: deviceID, transactionID: transactionID, sealed: try Self.sealed(row.sealed)),
            transaction: try row.transaction.transaction(),
            deviceIDs: row.deviceIDs.split(separator: " ").map(String.init))
    }

    /// A request's row with what was sealed for one device and the ids of every device it was
    /// sealed for (space-separated), as `delivery` reads them in one statement.
    private struct DeliveryRow: Decodable {
        /// The request's columns, qualified for the join and named as `Row` reads them.
        static let columns = Row.CodingKeys.allCases.map { "t.\($0.rawValue) AS \($0.rawValue)" }.joined(separator: ", ")

        var transaction: Row
        var sealed: String
        var deviceIDs: String

        enum CodingKeys: String, CodingKey {
            case sealed = "sealed_details", deviceIDs = "device_ids"
        }

        init(from decoder: any Decoder) throws {
            transaction = try Row(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            sealed = try container.decode(String.self, forKey: .sealed)
            deviceIDs = try container.decode(String.self, forKey: .deviceIDs)
        }
    }

    public func deviceIDs(transactionID: String, on executor: any SQLExecutor) async throws -> [String] {
        try await executor.all(
            "SELECT device_id FROM approval_deliveries WHERE transaction_id = \(transactionID)", column: "device_id", as: String.self)
    }

    public func undecided(ids: [String], on executor: any SQLExecutor) async throws -> Set<String> {
        Set(try await executor.run(chunking: ids) { part in
            "SELECT id FROM approval_transactions WHERE status = 'pending' AND id IN (\(list: part))"
        }.map { (row) throws(StorageError) in try row.decode(column: "id", as: String.self) })
    }

    /// A pending request as a device lists it.
    private struct PendingRow: Decodable {
        var id: String
        var createdAt: Date
        var expiresAt: Date
        var sealedDetails: String

        enum CodingKeys: String, CodingKey {
            case id, createdAt = "created_at", expiresAt = "expires_at", sealedDetails = "sealed_details"
        }
    }

    public func pending(deviceID: String, at date: Date, limit: Int, on executor: any SQLExecutor) async throws
        -> [PendingRequestEnvelope] {
        try await executor.all(
            """
            SELECT t.id, t.created_at, t.expires_at, d.sealed_details
            FROM approval_deliveries d JOIN approval_transactions t ON t.id = d.transaction_id
            WHERE d.device_id = \(deviceID) AND t.status = 'pending' AND t.expires_at > \(date)
            ORDER BY t.id DESC LIMIT \(limit)
            """, as: PendingRow.self
        ).map { row in
            PendingRequestEnvelope(
                id: row.id, createdAt: row.createdAt, expiresAt: row.expiresAt, details: try Self.sealed(row.sealedDetails))
        }
    }

    public func decide(id: String, status: ApprovalTransaction.Status, deviceID: String, response: String,
                       factors: [String], reason: DenyReason?, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            UPDATE approval_transactions
            SET status = \(status), decided_at = \(date), decided_by_device = \(deviceID), response_jws = \(response),
                factors = \(factors.joined(separator: " ")), deny_reason = \(reason)
            WHERE id = \(id) AND status = 'pending' AND expires_at > \(date) RETURNING id
            """)).isEmpty
    }

    public func allowPINFallback(id: String, verification: TransactionDetails.Verification,
                                 on executor: any SQLExecutor) async throws {
        var widened = verification
        widened.pinFallback = true
        try await executor.run(
            """
            UPDATE approval_transactions SET verification = \(try JSONValue(encoding: widened).canonicalString)
            WHERE id = \(id) AND status = 'pending'
            """)
    }

    public func claimExpiredPush(before date: Date, limit: Int, on executor: any SQLExecutor) async throws
        -> [ApprovalTransaction] {
        let skipLocked = executor.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        return try await executor.all(
            """
            UPDATE approval_transactions SET expiry_notified = 1
            WHERE id IN (
                SELECT id FROM approval_transactions
                WHERE delivery_mode = 'push' AND status = 'pending' AND expires_at <= \(date) AND expiry_notified = 0
                LIMIT \(limit)\(raw: skipLocked))
            RETURNING \(raw: Row.columns)
            """, as: Row.self
        ).map { try $0.transaction() }
    }

    private struct RequestCount: Decodable {
        var n: Int
        var oldest: Date?
    }

    public func countRequests(userID: String, since date: Date, on executor: any SQLExecutor) async throws
        -> (count: Int, oldest: Date?) {
        let count = try await executor.first(
            """
            SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM approval_transactions
            WHERE user_id = \(userID) AND created_at >= \(date) AND counts_for_user = 1
            """, as: RequestCount.self)
        return (count?.n ?? 0, count?.oldest)
    }

    public func approved(userID: String, fromNetwork network: String, since date: Date, on executor: any SQLExecutor)
        async throws -> Bool {
        !(try await executor.run(
            """
            SELECT 1 AS one FROM approval_transactions
            WHERE user_id = \(userID) AND created_at >= \(date) AND request_network = \(network) AND status = 'approved'
            LIMIT 1
            """)).isEmpty
    }

    public func approved(userID: String, fromAgent agent: String, since date: Date, on executor: any SQLExecutor)
        async throws -> Bool {
        !(try await executor.run(
            """
            SELECT 1 AS one FROM approval_transactions
            WHERE user_id = \(userID) AND created_at >= \(date) AND request_agent = \(agent) AND status = 'approved'
            LIMIT 1
            """)).isEmpty
    }

    public func countDenied(userID: String, since date: Date, on executor: any SQLExecutor) async throws -> Int {
        try await executor.first(
            """
            SELECT COUNT(*) AS n FROM approval_transactions
            WHERE user_id = \(userID) AND created_at >= \(date) AND status = 'denied'
            """, column: "n", as: Int.self) ?? 0
    }

    public func countAll(userID: String, since date: Date, on executor: any SQLExecutor) async throws -> Int {
        try await executor.first(
            "SELECT COUNT(*) AS n FROM approval_transactions WHERE user_id = \(userID) AND created_at >= \(date)",
            column: "n", as: Int.self) ?? 0
    }

    public func recordPoll(id: String, previous: Date?, at date: Date, interval: Int,
                           on executor: any SQLExecutor) async throws -> Bool {
        let statement: SQLStatement = if let previous {
            """
            UPDATE approval_transactions SET last_polled_at = \(date), poll_interval = \(interval)
            WHERE id = \(id) AND last_polled_at = \(previous) RETURNING id
            """
        } else {
            """
            UPDATE approval_transactions SET last_polled_at = \(date), poll_interval = \(interval)
            WHERE id = \(id) AND last_polled_at IS NULL RETURNING id
            """
        }
        return !(try await executor.run(statement)).isEmpty
    }

    public func markExchanged(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            UPDATE approval_transactions SET exchanged_at = \(date)
            WHERE id = \(id) AND status = 'approved' AND exchanged_at IS NULL RETURNING id
            """)).isEmpty
    }

    public func markExchanged(id: String, ifUserActive userID: String, at date: Date, on executor: any SQLExecutor)
        async throws -> Bool {
        !(try await executor.run(
            """
            UPDATE approval_transactions SET exchanged_at = \(date)
            WHERE id = \(id) AND status = 'approved' AND exchanged_at IS NULL
                AND \(SQLUserRepository.isActive(userID))
            RETURNING id
            """)).isEmpty
    }

    public func purge(undecidedBefore: Date, decidedBefore: Date, on executor: any SQLExecutor) async throws -> Int {
        // Deliveries go first: SQLite enforces the cascade, but deleting them explicitly keeps
        // both engines doing the same bounded work through the same index.
        try await executor.run(
            """
            DELETE FROM approval_deliveries WHERE transaction_id IN (
                SELECT id FROM approval_transactions
                WHERE (status = 'pending' AND expires_at < \(undecidedBefore)) OR (status <> 'pending' AND expires_at < \(decidedBefore)))
            """)
        return try await executor.run(
            """
            DELETE FROM approval_transactions
            WHERE (status = 'pending' AND expires_at < \(undecidedBefore)) OR (status <> 'pending' AND expires_at < \(decidedBefore))
            RETURNING id
            """).count
    }

    private static func sealed(_ text: String) throws -> SealedDetails {
        guard let sealed = try? JSONDecoder().decode(SealedDetails.self, from: Data(text.utf8)) else {
            throw StorageError.corrupt("sealed details")
        }
        return sealed
    }

    /// Requests per hour of the tenant's from `fromHour` (hours since 1970), by outcome; one
    /// still pending past its expiry counts as expired.
    func hourlyCounts(tenantID: String, fromHour: Int64, at date: Date, on executor: any SQLExecutor) async throws
        -> [ApprovalHourlyCounts] {
        try await executor.all(
            """
            SELECT created_at / 3600000 AS hour, COUNT(*) AS requests,
                SUM(CASE WHEN status = 'approved' THEN 1 ELSE 0 END) AS approved,
                SUM(CASE WHEN status = 'denied' THEN 1 ELSE 0 END) AS denied,
                SUM(CASE WHEN status = 'pending' AND expires_at <= \(date) THEN 1 ELSE 0 END) AS expired
            FROM approval_transactions
            WHERE tenant_id = \(tenantID) AND created_at >= \(fromHour * 3_600_000)
            GROUP BY created_at / 3600000
            """, as: ApprovalHourlyCounts.self)
    }
}

/// One hour of a tenant's requests, by outcome (`hour` counts hours since 1970).
struct ApprovalHourlyCounts: Decodable, Sendable {
    let hour: Int64, requests: Int64, approved: Int64, denied: Int64, expired: Int64
}
