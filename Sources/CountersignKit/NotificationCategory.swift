#if canImport(UserNotifications)
import CountersignCore
import UserNotifications

/// The notification category of Countersign's alerts (`aps.category`), with its two actions.
/// Built on Apple platforms only. Approve opens the app, because the user must see the
/// request's details before the device signs them; Deny may answer from the notification.
///
/// ```swift
/// UNUserNotificationCenter.current().setNotificationCategories([CountersignNotificationCategory.make()])
/// ```
public enum CountersignNotificationCategory {
    public static let identifier = PushPayload.notificationCategory
    public static let approveAction = "COUNTERSIGN_APPROVE"
    public static let denyAction = "COUNTERSIGN_DENY"

    public static func make(approveTitle: String = "Approve", denyTitle: String = "Deny") -> UNNotificationCategory {
        let approve = UNNotificationAction(
            identifier: approveAction, title: approveTitle, options: [.authenticationRequired, .foreground])
        let deny = UNNotificationAction(
            identifier: denyAction, title: denyTitle, options: [.authenticationRequired, .destructive])
        return UNNotificationCategory(identifier: identifier, actions: [approve, deny], intentIdentifiers: [], options: [])
    }
}
#endif
