#if canImport(UserNotifications)
import CountersignCore
import UserNotifications

/// The notification categories of Countersign's alerts, with their two actions. Built on Apple
/// platforms only.
///
/// - `identifier` is the category the server's pushes name (`aps.category`): Approve opens the
///   app, because the user must see the request's details before the device signs them; Deny
///   may answer from the notification.
/// - `noticeIdentifier` is the category of a security notice's alert (a device or passkey added
///   to the account, a recovery code or pass used), with one action, "Not me", which answers from
///   the notification (`CountersignAuthenticator.reportNotMe(_:)`), device unlocked.
/// - `confirmOnlyIdentifier` is for an app whose notification service extension has opened the
///   request and shown its client, account and binding message in the alert, and found that it
///   asks only for a tap (`RequestDetails.isConfirmOnly`): the extension sets it, and Approve
///   then answers from the notification too. Both actions need the device unlocked.
///
/// ```swift
/// UNUserNotificationCenter.current().setNotificationCategories(CountersignNotificationCategory.all())
/// ```
public enum CountersignNotificationCategory {
    public static let identifier = PushPayload.notificationCategory
    public static let confirmOnlyIdentifier = PushPayload.notificationCategory + "_CONFIRM_ONLY"
    public static let approveAction = "COUNTERSIGN_APPROVE"
    public static let denyAction = "COUNTERSIGN_DENY"
    public static let noticeIdentifier = PushPayload.noticeCategory
    public static let notMeAction = "COUNTERSIGN_NOT_ME"

    /// The three categories.
    public static func all(
        approveTitle: String = "Approve", denyTitle: String = "Deny", notMeTitle: String = "Not me"
    ) -> Set<UNNotificationCategory> {
        [make(approveTitle: approveTitle, denyTitle: denyTitle), makeConfirmOnly(approveTitle: approveTitle, denyTitle: denyTitle),
         makeNotice(notMeTitle: notMeTitle)]
    }

    /// The category of a security notice, whose "Not me" answers from the notification.
    public static func makeNotice(notMeTitle: String = "Not me") -> UNNotificationCategory {
        let notMe = UNNotificationAction(identifier: notMeAction, title: notMeTitle, options: [.authenticationRequired, .destructive])
        return UNNotificationCategory(identifier: noticeIdentifier, actions: [notMe], intentIdentifiers: [], options: [])
    }

    /// The category whose Approve answers from the notification (device unlocked).
    public static func makeConfirmOnly(approveTitle: String = "Approve", denyTitle: String = "Deny") -> UNNotificationCategory {
        let approve = UNNotificationAction(identifier: approveAction, title: approveTitle, options: [.authenticationRequired])
        let deny = UNNotificationAction(
            identifier: denyAction, title: denyTitle, options: [.authenticationRequired, .destructive])
        return UNNotificationCategory(identifier: confirmOnlyIdentifier, actions: [approve, deny], intentIdentifiers: [], options: [])
    }

    public static func make(approveTitle: String = "Approve", denyTitle: String = "Deny") -> UNNotificationCategory {
        let approve = UNNotificationAction(
            identifier: approveAction, title: approveTitle, options: [.authenticationRequired, .foreground])
        let deny = UNNotificationAction(
            identifier: denyAction, title: denyTitle, options: [.authenticationRequired, .destructive])
        return UNNotificationCategory(identifier: identifier, actions: [approve, deny], intentIdentifiers: [], options: [])
    }
}
#endif
