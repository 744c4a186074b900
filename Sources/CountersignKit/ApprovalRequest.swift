import CountersignCore
import Foundation

/// A request for the user's approval, waiting in one enrollment's inbox: who it is for on this
/// device, and when it was made and expires. What it asks is sealed to the device; open it with
/// `CountersignAuthenticator.details(for:)` before showing or answering it.
///
/// ```swift
/// for request in try await authenticator.pendingRequests() {
///     let details = try await authenticator.details(for: request)
///     print(details.clientName, details.bindingMessage ?? "", request.expiresAt)
/// }
/// ```
public struct ApprovalRequest: Sendable, Equatable, Identifiable {
    /// The request's id in the device protocol (`txn_…`).
    public let id: String
    /// The enrollment whose inbox holds the request.
    public let enrollmentID: Enrollment.ID
    public let createdAt: Date
    public let expiresAt: Date
    /// The details, sealed to the enrollment's agreement key.
    public let sealedDetails: SealedDetails

    /// A request from an envelope the server sent to `enrollmentID`'s device.
    ///
    /// ```swift
    /// let request = ApprovalRequest(enrollmentID: enrollment.id, envelope: envelope)
    /// ```
    public init(enrollmentID: Enrollment.ID, envelope: PendingRequestEnvelope) {
        self.id = envelope.id
        self.enrollmentID = enrollmentID
        self.createdAt = envelope.createdAt
        self.expiresAt = envelope.expiresAt
        self.sealedDetails = envelope.details
    }
}
