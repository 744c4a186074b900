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
    /// Whether the request counts against the user's requests per minute: not a hosted sign-in
    /// from a browser the user never signed in with, which the sign-in limits on its own
    /// (`SignInPushLimits`), so that nobody can spend the user's budget by naming them.
    var countsForUser = true
    /// The network the request came from (`IPNetwork.riskNetwork` of its address), written with
    /// it for the risk rules' `new_network`; not read back.
    var requestNetwork: String? = nil
    /// The browser the request came from (`UserAgentFamily`), for `new_user_agent`; not read back.
    var requestAgent: String? = nil

    public func isExpired(at date: Date) -> Bool { date >= expiresAt }
}

/// What is sealed for one device.
public struct ApprovalDelivery: Sendable, Equatable {
    public var deviceID: String
    public var transactionID: String
    public var sealed: SealedDetails
}

/// What a device answering a request reads: what was sealed for it, the request, and every
/// device the request was sealed for (whose streams drop it once it is decided).
public struct AnswerableDelivery: Sendable {
    public var delivery: ApprovalDelivery
    public var transaction: ApprovalTransaction
    public var deviceIDs: [String]
}
