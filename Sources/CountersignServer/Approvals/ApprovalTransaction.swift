import CountersignCore
import Foundation

/// One request for a user's approval, from `bc-authorize` to the token exchange. The relying
/// party knows it by `auth_req_id` (stored as a hash), devices by `id`.
public struct ApprovalTransaction: Sendable, Equatable {
    public enum Status: String, Sendable, Codable {
        case pending, approved, denied
    }

    public var id: String
    public var authReqIDHash: Data
    public var tenantID: String
    public var clientID: String
    public var userID: String
    public var scope: [String]
    public var acrValues: [String]?
    public var bindingMessage: String?
    /// The canonical `TransactionDetails` JSON sealed to every device.
    public var details: String
    /// `TransactionDetails.digest` of `details`.
    public var detailsDigest: String
    public var challenge: String
    public var status: Status
    /// Seconds the client must wait between token requests; grows with each `slow_down`.
    public var pollInterval: Int
    public var lastPolledAt: Date?
    public var createdAt: Date
    public var expiresAt: Date
    public var decidedAt: Date?
    public var decidedByDevice: String?
    /// The device's signed `ApprovalResponse`: the receipt.
    public var response: String?
    public var factors: [String]?
    public var exchangedAt: Date?
    /// What the user must do to approve (nil: confirm).
    public var verification: TransactionDetails.Verification? = nil
    /// For number matching: the number the relying party shows.
    public var matchNumber: Int64? = nil
    /// For a denial: why.
    public var denyReason: DenyReason? = nil
    /// How the client receives the result.
    public var deliveryMode: Client.DeliveryMode = .poll
    /// Ping and push: the `auth_req_id` and the client's notification token, sealed under the
    /// master key (`ClientNotificationSecrets`).
    public var authReqIDSealed: Data? = nil
    public var notificationTokenSealed: Data? = nil
    /// The RFC 9396 details the device showed and signed (they are in `details` too), which
    /// the tokens grant.
    var authorizationDetails: AuthorizationDetails? = nil

    public func isExpired(at date: Date) -> Bool { date >= expiresAt }
}

/// What is sealed for one device.
public struct ApprovalDelivery: Sendable, Equatable {
    public var deviceID: String
    public var transactionID: String
    public var sealed: SealedDetails
}

/// The storage the approval loop needs, for the relying-party side (`CIBA/`) and the device side.
public protocol ApprovalTransactionRepository: Sendable {
    func insert(_ transaction: ApprovalTransaction, deliveries: [ApprovalDelivery], on executor: any SQLExecutor) async throws
    func find(authReqIDHash: Data, on executor: any SQLExecutor) async throws -> ApprovalTransaction?
    func find(id: String, on executor: any SQLExecutor) async throws -> ApprovalTransaction?
    /// The delivery of a request to one device, with its transaction; nil if none was made.
    func delivery(transactionID: String, deviceID: String, on executor: any SQLExecutor) async throws
        -> (ApprovalDelivery, ApprovalTransaction)?
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
    /// Records a token request: sets `last_polled_at` and the interval, if `last_polled_at` is
    /// still `previous` (so that of two concurrent polls only one counts as on time).
    func recordPoll(id: String, previous: Date?, at date: Date, interval: Int, on executor: any SQLExecutor) async throws -> Bool
    /// Marks an approved request exchanged for tokens; false if it was not approved or already exchanged.
    func markExchanged(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    /// Deletes undecided requests that expired before `undecidedBefore` and decided ones older
    /// than `decidedBefore`, with their deliveries; returns how many requests were deleted.
    func purge(undecidedBefore: Date, decidedBefore: Date, on executor: any SQLExecutor) async throws -> Int
}

public struct SQLApprovalTransactionRepository: ApprovalTransactionRepository {
    public init() {}

    private static let columns = """
        id, auth_req_id_hash, tenant_id, client_id, user_id, scope, acr_values, binding_message, details, details_sha256,
        challenge, status, poll_interval, last_polled_at, created_at, expires_at, decided_at, decided_by_device,
        response_jws, factors, exchanged_at, verification, match_number, deny_reason, delivery_mode, auth_req_id_sealed,
        notification_token_sealed, authorization_details
        """

    public func insert(_ transaction: ApprovalTransaction, deliveries: [ApprovalDelivery], on executor: any SQLExecutor) async throws {
        try await executor.query(
            """
            INSERT INTO approval_transactions (id, auth_req_id_hash, tenant_id, client_id, user_id, scope, acr_values,
                binding_message, details, details_sha256, challenge, status, poll_interval, created_at, expires_at,
                verification, match_number, delivery_mode, auth_req_id_sealed, notification_token_sealed,
                authorization_details)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(transaction.id), .blob(transaction.authReqIDHash), .text(transaction.tenantID),
             .text(transaction.clientID), .text(transaction.userID), .text(transaction.scope.joined(separator: " ")),
             SQLValue(transaction.acrValues?.joined(separator: " ")), SQLValue(transaction.bindingMessage),
             .text(transaction.details), .text(transaction.detailsDigest), .text(transaction.challenge),
             .text(transaction.status.rawValue), SQLValue(transaction.pollInterval), SQLValue(transaction.createdAt),
             SQLValue(transaction.expiresAt),
             SQLValue(try transaction.verification.map { try JSONValue(encoding: $0).canonicalString }),
             transaction.matchNumber.map(SQLValue.integer) ?? .null,
             transaction.deliveryMode == .poll ? .null : .text(transaction.deliveryMode.rawValue),
             transaction.authReqIDSealed.map(SQLValue.blob) ?? .null,
             transaction.notificationTokenSealed.map(SQLValue.blob) ?? .null,
             SQLValue(transaction.authorizationDetails?.json.canonicalString)])
        for delivery in deliveries {
            try await executor.query(
                "INSERT INTO approval_deliveries (device_id, transaction_id, sealed_details) VALUES (?, ?, ?)",
                .text(delivery.deviceID), .text(delivery.transactionID),
                .text(try JSONValue(encoding: delivery.sealed).canonicalString))
        }
    }

    public func find(authReqIDHash: Data, on executor: any SQLExecutor) async throws -> ApprovalTransaction? {
        try await executor.first(
            "SELECT \(Self.columns) FROM approval_transactions WHERE auth_req_id_hash = ?", .blob(authReqIDHash)
        ).map(Self.decode)
    }

    public func find(id: String, on executor: any SQLExecutor) async throws -> ApprovalTransaction? {
        try await executor.first("SELECT \(Self.columns) FROM approval_transactions WHERE id = ?", .text(id)).map(Self.decode)
    }

    public func delivery(transactionID: String, deviceID: String, on executor: any SQLExecutor) async throws
        -> (ApprovalDelivery, ApprovalTransaction)? {
        guard let row = try await executor.first(
            "SELECT sealed_details FROM approval_deliveries WHERE device_id = ? AND transaction_id = ?",
            .text(deviceID), .text(transactionID)),
            let transaction = try await find(id: transactionID, on: executor) else { return nil }
        let delivery = ApprovalDelivery(
            deviceID: deviceID, transactionID: transactionID, sealed: try Self.sealed(try row.string("sealed_details")))
        return (delivery, transaction)
    }

    public func deviceIDs(transactionID: String, on executor: any SQLExecutor) async throws -> [String] {
        try await executor.query(
            "SELECT device_id FROM approval_deliveries WHERE transaction_id = ?", [.text(transactionID)]
        ).map { try $0.string("device_id") }
    }

    public func undecided(ids: [String], on executor: any SQLExecutor) async throws -> Set<String> {
        Set(try await executor.query(ids: ids) { list in
            "SELECT id FROM approval_transactions WHERE status = 'pending' AND id IN (\(list))"
        }.map { try $0.string("id") })
    }

    public func pending(deviceID: String, at date: Date, limit: Int, on executor: any SQLExecutor) async throws
        -> [PendingRequestEnvelope] {
        try await executor.query(
            """
            SELECT t.id, t.created_at, t.expires_at, d.sealed_details
            FROM approval_deliveries d JOIN approval_transactions t ON t.id = d.transaction_id
            WHERE d.device_id = ? AND t.status = 'pending' AND t.expires_at > ?
            ORDER BY t.id DESC LIMIT ?
            """,
            [.text(deviceID), SQLValue(date), .integer(Int64(limit))]
        ).map { row in
            PendingRequestEnvelope(
                id: try row.string("id"), createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
                details: try Self.sealed(try row.string("sealed_details")))
        }
    }

    public func decide(id: String, status: ApprovalTransaction.Status, deviceID: String, response: String,
                       factors: [String], reason: DenyReason?, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.query(
            """
            UPDATE approval_transactions
            SET status = ?, decided_at = ?, decided_by_device = ?, response_jws = ?, factors = ?, deny_reason = ?
            WHERE id = ? AND status = 'pending' AND expires_at > ? RETURNING id
            """,
            [.text(status.rawValue), SQLValue(date), .text(deviceID), .text(response), .text(factors.joined(separator: " ")),
             SQLValue(reason?.rawValue), .text(id), SQLValue(date)])).isEmpty
    }

    public func allowPINFallback(id: String, verification: TransactionDetails.Verification,
                                 on executor: any SQLExecutor) async throws {
        var widened = verification
        widened.pinFallback = true
        try await executor.query(
            "UPDATE approval_transactions SET verification = ? WHERE id = ? AND status = 'pending'",
            .text(try JSONValue(encoding: widened).canonicalString), .text(id))
    }

    public func claimExpiredPush(before date: Date, limit: Int, on executor: any SQLExecutor) async throws
        -> [ApprovalTransaction] {
        let skipLocked = executor.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        return try await executor.query(
            """
            UPDATE approval_transactions SET expiry_notified = 1
            WHERE id IN (
                SELECT id FROM approval_transactions
                WHERE delivery_mode = 'push' AND status = 'pending' AND expires_at <= ? AND expiry_notified = 0
                LIMIT ?\(skipLocked))
            RETURNING \(Self.columns)
            """,
            [SQLValue(date), .integer(Int64(limit))]
        ).map(Self.decode)
    }

    public func countRequests(userID: String, since date: Date, on executor: any SQLExecutor) async throws
        -> (count: Int, oldest: Date?) {
        let row = try await executor.first(
            "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM approval_transactions WHERE user_id = ? AND created_at >= ?",
            .text(userID), SQLValue(date))
        return (Int(try row?.int("n") ?? 0), try row?.optionalDate("oldest"))
    }

    public func recordPoll(id: String, previous: Date?, at date: Date, interval: Int,
                           on executor: any SQLExecutor) async throws -> Bool {
        let condition = previous == nil ? "last_polled_at IS NULL" : "last_polled_at = ?"
        var binds: [SQLValue] = [SQLValue(date), SQLValue(interval), .text(id)]
        if let previous { binds.append(SQLValue(previous)) }
        return !(try await executor.query(
            "UPDATE approval_transactions SET last_polled_at = ?, poll_interval = ? WHERE id = ? AND \(condition) RETURNING id",
            binds)).isEmpty
    }

    public func markExchanged(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.query(
            """
            UPDATE approval_transactions SET exchanged_at = ?
            WHERE id = ? AND status = 'approved' AND exchanged_at IS NULL RETURNING id
            """,
            [SQLValue(date), .text(id)])).isEmpty
    }

    public func purge(undecidedBefore: Date, decidedBefore: Date, on executor: any SQLExecutor) async throws -> Int {
        // Deliveries go first: SQLite enforces the cascade, but deleting them explicitly keeps
        // both engines doing the same bounded work through the same index.
        let condition = "(status = 'pending' AND expires_at < ?) OR (status <> 'pending' AND expires_at < ?)"
        try await executor.query(
            "DELETE FROM approval_deliveries WHERE transaction_id IN (SELECT id FROM approval_transactions WHERE \(condition))",
            [SQLValue(undecidedBefore), SQLValue(decidedBefore)])
        return try await executor.query(
            "DELETE FROM approval_transactions WHERE \(condition) RETURNING id",
            [SQLValue(undecidedBefore), SQLValue(decidedBefore)]).count
    }

    private static func sealed(_ text: String) throws -> SealedDetails {
        guard let sealed = try? JSONDecoder().decode(SealedDetails.self, from: Data(text.utf8)) else {
            throw StorageError.corrupt("sealed details")
        }
        return sealed
    }

    static func decode(_ row: SQLRow) throws -> ApprovalTransaction {
        func words(_ text: String?) -> [String]? { text.map { $0.split(separator: " ").map(String.init) } }
        return ApprovalTransaction(
            id: try row.string("id"), authReqIDHash: try row.data("auth_req_id_hash"), tenantID: try row.string("tenant_id"),
            clientID: try row.string("client_id"), userID: try row.string("user_id"),
            scope: words(try row.string("scope")) ?? [], acrValues: words(try row.optionalString("acr_values")),
            bindingMessage: try row.optionalString("binding_message"), details: try row.string("details"),
            detailsDigest: try row.string("details_sha256"), challenge: try row.string("challenge"),
            status: try row.string("status", as: ApprovalTransaction.Status.self),
            pollInterval: Int(try row.int("poll_interval")), lastPolledAt: try row.optionalDate("last_polled_at"),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
            decidedAt: try row.optionalDate("decided_at"), decidedByDevice: try row.optionalString("decided_by_device"),
            response: try row.optionalString("response_jws"), factors: words(try row.optionalString("factors")),
            exchangedAt: try row.optionalDate("exchanged_at"),
            verification: try row.optionalString("verification").map {
                try JSONDecoder().decode(TransactionDetails.Verification.self, from: Data($0.utf8))
            },
            matchNumber: try row.optionalInt("match_number"),
            denyReason: try row.optionalString("deny_reason", as: DenyReason.self),
            deliveryMode: try row.optionalString("delivery_mode", as: Client.DeliveryMode.self) ?? .poll,
            authReqIDSealed: try row.optionalData("auth_req_id_sealed"),
            notificationTokenSealed: try row.optionalData("notification_token_sealed"),
            authorizationDetails: try row.optionalString("authorization_details").map(AuthorizationDetails.init(stored:)))
    }
}
