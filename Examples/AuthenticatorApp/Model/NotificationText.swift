import CountersignKit
import Foundation

/// What the notification service extension writes into a request's alert. The push carries
/// identifiers only; the extension fetches the request, opens its sealed details on the phone
/// and shows who asks and the binding message. If that fails the alert keeps its generic text.
///
/// ```swift
/// if let text = await NotificationText.forPush(content.userInfo, with: authenticator) {
///     content.title = text.title
///     content.body = text.body
/// }
/// ```
public struct NotificationText: Sendable, Equatable {
    public let title: String
    public let body: String
    /// Whether Approve may answer from the alert: the request asks only for a tap, and the alert
    /// now shows who asks (the extension then sets `CountersignNotificationCategory.confirmOnlyIdentifier`).
    public let approvableFromAlert: Bool

    public init(_ details: RequestDetails) {
        title = "\(details.clientName): approve as \(details.username)?"
        approvableFromAlert = details.isConfirmOnly
        let ask = approvableFromAlert ? "Approve or deny here." : "Open to check it and approve."
        body = details.bindingMessage.map { "“\($0)”. \(ask)" } ?? (approvableFromAlert ? "Approve or deny here." : "Open to see the request and approve or deny it.")
    }

    /// The text for a push's request; nil for a push that is not a new Countersign request, or
    /// when the request cannot be fetched and opened (the generic text stays).
    nonisolated(nonsending) public static func forPush(_ userInfo: [AnyHashable: Any], with authenticator: CountersignAuthenticator) async -> NotificationText? {
        guard let request = try? await authenticator.request(fromPushPayload: userInfo),
              let details = try? await authenticator.details(for: request) else { return nil }
        return NotificationText(details)
    }
}
