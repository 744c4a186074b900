import AuthenticatorAppModel
import CountersignCore
import CountersignKit
import UIKit
import UserNotifications

/// What every screen shares: one authenticator over the Keychain (its keys in the Secure
/// Enclave), shared with the notification service extension through the keychain access group.
@MainActor final class AppServices {
    static let shared = AppServices()

    /// The app's client at the organisation's server (`countersign admin client create
    /// --auth-method none --redirect-uri org.countersign.authenticator:/signed-in --scope openid
    /// --scope countersign:enroll` prints it), set in Info.plist; empty until then.
    static var clientID: String { Bundle.main.object(forInfoDictionaryKey: "CountersignClientID") as? String ?? "" }
    static let redirectURI = "org.countersign.authenticator:/signed-in"

    let choice = AuthenticatorChoice()
    let authenticator: CountersignAuthenticator
    let pushTokens: PushTokens
    let passkeys: PasskeyAuthenticator
    private(set) var deviceToken: Data?

    private init() {
        // The keychain access group the app and its extension share (Info.plist, entitlements).
        let group = Bundle.main.object(forInfoDictionaryKey: "CountersignKeychainGroup") as? String
        authenticator = CountersignAuthenticator(
            keyStore: KeychainKeyStore(service: "org.countersign.authenticator", accessGroup: group),
            biometricKeys: SecureEnclaveBiometricKeys(),
            hooks: AuthenticatorHooks(picker: choice, interstitials: choice))
        let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
        pushTokens = PushTokens(authenticator: authenticator, file: support.appending(path: "push-tokens.json"))
        passkeys = PasskeyAuthenticator(
            store: KeychainPasskeyStore(service: "org.countersign.passkeys", accessGroup: group),
            userVerifier: BiometricPasskeyVerifier(keys: SecureEnclaveBiometricKeys()),
            selector: PasskeyPicker())
    }

    func received(deviceToken: Data) {
        self.deviceToken = deviceToken
        Task { await pushTokens.register(deviceToken: deviceToken) }
    }

    /// The registration a new enrollment carries, when the system has given a token.
    var pushRegistration: PushRegistration? {
        deviceToken.map { PushRegistration(provider: .apns, token: PushTokens.hex($0)) }
    }
}

@main
final class AppDelegate: UIResponder, UIApplicationDelegate, @preconcurrency UNUserNotificationCenterDelegate {
    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        let center = UNUserNotificationCenter.current()
        center.delegate = self
        // Approve opens the app (the details must be seen), except where the extension has shown
        // them in the alert of a request that asks only for a tap; Deny answers from the alert,
        // and so does "Not me" on a security notice (a device or passkey added to the account).
        center.setNotificationCategories(CountersignNotificationCategory.all())
        Task {
            if (try? await center.requestAuthorization(options: [.alert, .sound, .badge])) == true {
                application.registerForRemoteNotifications()
            }
        }
        return true
    }

    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        // Called at every launch; the token may have changed (rotation): PushTokens sends it only where it did.
        AppServices.shared.received(deviceToken: deviceToken)
    }

    /// A local alert for what went wrong while answering from a notification.
    private static func notify(_ problem: ProblemMessage) async {
        await notify(NoticeAnswer(title: problem.title, body: problem.explanation))
    }

    /// A local alert with a title and a text.
    private static func notify(_ text: NoticeAnswer) async {
        let content = UNMutableNotificationContent()
        content.title = text.title
        content.body = text.body
        try? await UNUserNotificationCenter.current().add(UNNotificationRequest(identifier: UUID().uuidString, content: content, trigger: nil))
    }

    /// A request answered elsewhere, or expired: its alert is taken down.
    func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]
    ) async -> UIBackgroundFetchResult {
        guard case .closed(let requestID, _)? = try? await AppServices.shared.authenticator.event(fromPushPayload: userInfo) else {
            return .noData
        }
        UNUserNotificationCenter.current().removeDeliveredNotifications(withIdentifiers: [requestID])
        return .newData
    }

    /// Shown while the app is open: the inbox's live stream shows the request too.
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification
    ) async -> UNNotificationPresentationOptions {
        [.banner, .sound]
    }

    /// Deny from the alert without opening the app, and Approve too for a request that asks
    /// only for a tap; otherwise Approve or a tap on the alert opens the approval screen.
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        let userInfo = response.notification.request.content.userInfo
        let authenticator = AppServices.shared.authenticator
        if PushPayload(userInfo: userInfo)?.event == .notice {
            // "Not me" undoes the change and pauses requests; a tap alone only dismisses.
            guard response.actionIdentifier == CountersignNotificationCategory.notMeAction,
                  case .notice(let notice)? = try? await authenticator.event(fromPushPayload: userInfo) else { return }
            await Self.notify(await NoticeAnswer.reportNotMe(notice, with: authenticator))
            return
        }
        guard let request = try? await authenticator.request(fromPushPayload: userInfo) else { return }
        switch response.actionIdentifier {
        case CountersignNotificationCategory.denyAction:
            if let details = try? await authenticator.details(for: request) {
                _ = await ApprovalResult.refuse(details, RequestSummary.refusals[0], with: authenticator)
            }
        case CountersignNotificationCategory.approveAction
            where response.notification.request.content.categoryIdentifier == CountersignNotificationCategory.confirmOnlyIdentifier:
            if let details = try? await authenticator.details(for: request),
               let result = await ApprovalResult.approveFromAlert(details, with: authenticator) {
                // Answered in the background: only a failure needs saying.
                if case .problem(let problem) = result { await Self.notify(problem) }
                return
            }
            SceneDelegate.current?.presentApproval(of: request)
        default:
            SceneDelegate.current?.presentApproval(of: request)
        }
    }
}
