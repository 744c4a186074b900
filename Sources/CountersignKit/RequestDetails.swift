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
    /// The address the relying party's request came from, as the server saw it.
    public var ipAddress: String? { transaction.context.ipAddress }
    public var userAgent: String? { transaction.context.userAgent }
    public var expiresAt: Date { request.expiresAt }

    /// Opens `request`'s sealed details with the enrollment's agreement key and checks that they
    /// are the canonical details of this very request, for this enrollment's tenant and user.
    init(opening request: ApprovalRequest, for enrollment: Enrollment, with key: any DeviceAgreementKey)
        throws(CountersignError) {
        let plaintext: Data
        do {
            let (encapsulatedKey, ciphertext) = try request.sealedDetails.parts()
            plaintext = try key.open(
                ciphertext: ciphertext, encapsulatedKey: encapsulatedKey,
                info: SealedDetails.info(deviceID: enrollment.deviceID),
                authenticating: SealedDetails.additionalData(requestID: request.id))
        } catch let error as ApprovalMessageError {
            throw .invalidRequestDetails(error.description)
        } catch {
            throw .invalidRequestDetails(ApprovalMessageError.cannotOpen.description)
        }
        let transaction: TransactionDetails
        do { transaction = try TransactionDetails(canonicalBytes: plaintext) } catch {
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
}
