import CountersignCore

/// What a push tells the device (`CountersignAuthenticator.event(fromPushPayload:)`).
public enum PushEvent: Sendable {
    /// A request waits for the user's answer.
    case request(ApprovalRequest)
    /// The request was answered on another device (or withdrawn): take its notification down.
    /// The inbox no longer lists it.
    case closed(requestID: String, enrollmentID: Enrollment.ID)
    /// Something was done to the account (a device or passkey added, a recovery code or pass
    /// used): show `notice.summary` and offer "Not me" (`reportNotMe(_:)`).
    case notice(SecurityNotice)
}
