import CountersignCore
import Foundation

/// What an approval request asks, opened with this device's key and checked: the only form in
/// which a request can be approved or denied, so that the answer always signs the details the
/// user was shown.
///
/// ```swift
/// let details = try await authenticator.details(for: request)
/// print("\(details.clientName) asks \(details.username) to approve “\(details.bindingMessage ?? "sign-in")”")
/// let acknowledgement = try await authenticator.approve(details)
/// ```
public struct RequestDetails: Sendable, Equatable {
    public let request: ApprovalRequest
    /// The details exactly as the server sealed them.
    public let transaction: TransactionDetails
    /// The base64url SHA-256 of the bytes opened (`TransactionDetails.digest(of:)`), which the
    /// answer signs.
    public let digest: String

    /// The relying party's display name.
    public var clientName: String { transaction.client.name }
    /// The username of the user the request is for.
    public var username: String { transaction.user.name }
    /// The text the relying party shows on its own screen too; the user compares the two.
    public var bindingMessage: String? { transaction.bindingMessage }
    public var scope: [String] { transaction.scope }
    /// The relying party's RFC 9396 authorization details — for a payment, its amount,
    /// currency and payee — each a JSON object with a string `type`; empty when none were sent.
    /// Show every one before the user decides: the answer signs them.
    ///
    /// ```swift
    /// for detail in details.authorizationDetails where detail["type"]?.stringValue == "payment_initiation" {
    ///     let amount = detail["instructedAmount"]?["amount"]?.stringValue
    /// }
    /// ```
    public var authorizationDetails: [JSONValue] { transaction.authorizationDetails ?? [] }
    /// The address the relying party's request came from, as the server saw it.
    public var ipAddress: String? { transaction.context.ipAddress }
    public var userAgent: String? { transaction.context.userAgent }
    /// Why the request asks for more than usual: the reasons of the tenant's risk rules that
    /// fired ("new network: 203.0.113.0/24"); empty when none did. Show them beside the request.
    public var riskReasons: [String] { transaction.risk?.map(\.reason) ?? [] }
    public var expiresAt: Date { request.expiresAt }

    /// What the user must do to approve; a confirmation when the details say nothing.
    public var verification: TransactionDetails.Verification {
        transaction.verification ?? TransactionDetails.Verification(factor: .confirm)
    }
    /// The factor an approval must use (or, for a biometric or custom check, the PIN when
    /// `allowsPINFallback`).
    public var requiredFactor: Factor { verification.factor }
    /// Whether a tap is all the request asks: the `confirm` factor, with no alternatives to
    /// choose among. Such a request may be approved from its notification once the alert has
    /// shown who asks (`CountersignNotificationCategory.confirmOnlyIdentifier`).
    public var isConfirmOnly: Bool { verification.factor == .confirm && verification.alternatives == nil }
    /// Whether a PIN is accepted instead of the biometric or custom check.
    public var allowsPINFallback: Bool { verification.pinFallback == true }
    /// For number matching: the numbers to offer, one of them the one the relying party shows;
    /// nil when the user types the number instead.
    public var numberChoices: [Int64]? { verification.numberMatch?.choices }
    /// For number matching: how many digits the number has.
    public var numberDigits: Int { Int(clamping: verification.numberMatch?.digits ?? NumberMatch.digits) }

    /// Opens `request`'s sealed details with the enrollment's key of their suite and checks that they
    /// are the canonical details of this very request, for this enrollment's tenant and user.
    init(
        opening request: ApprovalRequest, for enrollment: Enrollment,
        with open: (_ ciphertext: Data, _ encapsulatedKey: Data, _ info: Data, _ aad: Data) throws -> Data
    ) throws(CountersignError) {
        let plaintext: Data
        do {
            let (encapsulatedKey, ciphertext) = try request.sealedDetails.parts()
            plaintext = try open(
                ciphertext, encapsulatedKey, SealedDetails.info(deviceID: enrollment.deviceID),
                SealedDetails.additionalData(requestID: request.id))
        } catch let error as ApprovalMessageError {
            throw .invalidRequestDetails(error.description)
        } catch {
            throw .invalidRequestDetails(ApprovalMessageError.cannotOpen.description)
        }
        let transaction: TransactionDetails
        do { transaction = try TransactionDetails(canonicalBytes: plaintext) } catch {
            if Self.asksForAnUnknownFactor(plaintext) { throw .requestNotHandleable }
            throw .invalidRequestDetails(error.description)
        }
        guard transaction.requestID == request.id else {
            throw .invalidRequestDetails("the details are those of another request")
        }
        guard transaction.tenant == enrollment.tenant, transaction.user.id == enrollment.user.id else {
            throw .invalidRequestDetails("the details are for another user than this enrollment's")
        }
        self.request = request
        self.transaction = transaction
        self.digest = TransactionDetails.digest(of: plaintext)
    }

    /// Whether otherwise well-formed details fail only because they require a factor this SDK
    /// does not know: a request it cannot answer, rather than one it must not trust.
    private static func asksForAnUnknownFactor(_ plaintext: Data) -> Bool {
        guard let value = try? JSONValue(parsing: plaintext), value.canonicalData == plaintext,
              let factor = value["verification"]?["factor"]?.stringValue else { return false }
        return Factor(rawValue: factor) == nil
    }
}
