import AuthenticatorAppModel
import CountersignCore
import CountersignKit
import UserNotifications

/// Writes who asks, and the binding message, into a request's alert. The push itself carries
/// identifiers only (`PushPayload`); this extension fetches the request with the device's key,
/// which it shares with the app through the keychain access group, and opens the sealed details
/// on the phone. If that takes too long or fails, the alert keeps the push's generic text.
final class NotificationService: UNNotificationServiceExtension {
    private var delivery: Delivery?
    private var work: Task<Void, Never>?

    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        guard let content = request.content.mutableCopy() as? UNMutableNotificationContent,
              // Read here: `userInfo` is not Sendable, the payload is.
              let payload = PushPayload(userInfo: request.content.userInfo) else {
            contentHandler(request.content)
            return
        }
        let delivery = Delivery(content: content, handler: contentHandler)
        self.delivery = delivery
        let group = Bundle.main.object(forInfoDictionaryKey: "CountersignKeychainGroup") as? String
        let authenticator = CountersignAuthenticator(keyStore: KeychainKeyStore(service: "org.countersign.authenticator", accessGroup: group))
        work = Task {
            delivery.deliver(await NotificationText.forPush(payload.fcmData, with: authenticator))
        }
    }

    override func serviceExtensionTimeWillExpire() {
        work?.cancel()
        delivery?.deliver(nil)
    }
}

/// The alert and the handler that shows it, used once: by the task that fetched the request,
/// or at the system's deadline with the push's own text, whichever comes first.
private final class Delivery: @unchecked Sendable {
    // Sendable by construction: `content` and `handler` are taken under `lock`, once.
    private let lock = NSLock()
    private var content: UNMutableNotificationContent?
    private var handler: ((UNNotificationContent) -> Void)?

    init(content: UNMutableNotificationContent, handler: @escaping (UNNotificationContent) -> Void) {
        self.content = content
        self.handler = handler
    }

    func deliver(_ text: NotificationText?) {
        lock.lock()
        let content = self.content
        let handler = self.handler
        self.content = nil
        self.handler = nil
        lock.unlock()
        guard let content, let handler else { return }
        if let text {
            content.title = text.title
            content.body = text.body
            // A request that asks only for a tap can be approved from the alert, now that it shows who asks.
            if text.approvableFromAlert { content.categoryIdentifier = CountersignNotificationCategory.confirmOnlyIdentifier }
        }
        handler(content)
    }
}
