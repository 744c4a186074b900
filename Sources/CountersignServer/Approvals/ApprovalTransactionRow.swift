import CountersignCore
import Foundation

/// A row of `approval_transactions` as stored: decoded by column name, then turned
/// into an `ApprovalTransaction` (lists of words split, JSON columns parsed). `countersign-bench
/// sql` reads it both ways, decoded and by hand (`init(row:)`), hence the SPI.
@_spi(Benchmarks) public struct ApprovalTransactionRow: Decodable {
    /// The columns `CodingKeys` names, for `SELECT` and `RETURNING`.
    public static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var authReqIDHash: Data
    var tenantID: String
    var clientID: String
    var userID: String
    var scope: String
    var acrValues: String?
    var bindingMessage: String?
    var details: String
    var detailsDigest: String
    var challenge: String
    var status: ApprovalTransaction.Status
    var pollInterval: Int
    var lastPolledAt: Date?
    var createdAt: Date
    var expiresAt: Date
    var decidedAt: Date?
    var decidedByDevice: String?
    var response: String?
    var factors: String?
    var exchangedAt: Date?
    var verification: String?
    var matchNumber: Int64?
    var denyReason: DenyReason?
    /// NULL for a polling client.
    var deliveryMode: Client.DeliveryMode?
    var authReqIDSealed: Data?
    var notificationTokenSealed: Data?
    var authorizationDetails: String?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case authReqIDHash = "auth_req_id_hash"
        case tenantID = "tenant_id"
        case clientID = "client_id"
        case userID = "user_id"
        case scope
        case acrValues = "acr_values"
        case bindingMessage = "binding_message"
        case details
        case detailsDigest = "details_sha256"
        case challenge, status
        case pollInterval = "poll_interval"
        case lastPolledAt = "last_polled_at"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case decidedAt = "decided_at"
        case decidedByDevice = "decided_by_device"
        case response = "response_jws"
        case factors
        case exchangedAt = "exchanged_at"
        case verification
        case matchNumber = "match_number"
        case denyReason = "deny_reason"
        case deliveryMode = "delivery_mode"
        case authReqIDSealed = "auth_req_id_sealed"
        case notificationTokenSealed = "notification_token_sealed"
        case authorizationDetails = "authorization_details"
    }

    /// The hand-written reading `countersign-bench sql` compares with decoding: one look-up per
    /// column, by a literal name.
    public init(row: SQLRow) throws {
        id = try row.string("id")
        authReqIDHash = try row.data("auth_req_id_hash")
        tenantID = try row.string("tenant_id")
        clientID = try row.string("client_id")
        userID = try row.string("user_id")
        scope = try row.string("scope")
        acrValues = try row.optionalString("acr_values")
        bindingMessage = try row.optionalString("binding_message")
        details = try row.string("details")
        detailsDigest = try row.string("details_sha256")
        challenge = try row.string("challenge")
        status = try row.string("status", as: ApprovalTransaction.Status.self)
        pollInterval = Int(try row.int("poll_interval"))
        lastPolledAt = try row.optionalDate("last_polled_at")
        createdAt = try row.date("created_at")
        expiresAt = try row.date("expires_at")
        decidedAt = try row.optionalDate("decided_at")
        decidedByDevice = try row.optionalString("decided_by_device")
        response = try row.optionalString("response_jws")
        factors = try row.optionalString("factors")
        exchangedAt = try row.optionalDate("exchanged_at")
        verification = try row.optionalString("verification")
        matchNumber = try row.optionalInt("match_number")
        denyReason = try row.optionalString("deny_reason", as: DenyReason.self)
        deliveryMode = try row.optionalString("delivery_mode", as: Client.DeliveryMode.self)
        authReqIDSealed = try row.optionalData("auth_req_id_sealed")
        notificationTokenSealed = try row.optionalData("notification_token_sealed")
        authorizationDetails = try row.optionalString("authorization_details")
    }

    func transaction() throws -> ApprovalTransaction {
        func words(_ text: String?) -> [String]? { text.map { $0.split(separator: " ").map(String.init) } }
        return ApprovalTransaction(
            id: id, authReqIDHash: authReqIDHash, tenantID: tenantID, clientID: clientID, userID: userID,
            scope: words(scope) ?? [], acrValues: words(acrValues), bindingMessage: bindingMessage, details: details,
            detailsDigest: detailsDigest, challenge: challenge, status: status, pollInterval: pollInterval,
            lastPolledAt: lastPolledAt, createdAt: createdAt, expiresAt: expiresAt, decidedAt: decidedAt,
            decidedByDevice: decidedByDevice, response: response, factors: words(factors), exchangedAt: exchangedAt,
            verification: try verification.map {
                try JSONDecoder().decode(TransactionDetails.Verification.self, from: Data($0.utf8))
            },
            matchNumber: matchNumber, denyReason: denyReason, deliveryMode: deliveryMode ?? .poll,
            authReqIDSealed: authReqIDSealed, notificationTokenSealed: notificationTokenSealed,
            authorizationDetails: try authorizationDetails.map(AuthorizationDetails.init(stored:)))
    }
}
