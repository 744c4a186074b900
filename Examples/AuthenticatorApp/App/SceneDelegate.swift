import CountersignKit
import UIKit

/// Three tabs: the requests waiting (the inbox), the accounts on this phone, and the one-time
/// codes; passkeys are reached from the accounts.
final class SceneDelegate: UIResponder, UIWindowSceneDelegate {
    var window: UIWindow?
    private let inbox = InboxViewController()

    static var current: SceneDelegate? {
        UIApplication.shared.connectedScenes.compactMap { $0.delegate as? SceneDelegate }.first
    }

    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {
        guard let scene = scene as? UIWindowScene else { return }
        let window = UIWindow(windowScene: scene)
        let tabs = UITabBarController()
        tabs.viewControllers = [
            UINavigationController(rootViewController: inbox),
            UINavigationController(rootViewController: AccountsViewController()),
            UINavigationController(rootViewController: CodesViewController()),
        ]
        window.rootViewController = tabs
        window.makeKeyAndVisible()
        self.window = window
        AppServices.shared.choice.window = window
        // An enrollment link opened from another app (Mail, Safari) starts enrolling.
        if let url = connectionOptions.urlContexts.first?.url { open(url) }
    }

    func scene(_ scene: UIScene, openURLContexts contexts: Set<UIOpenURLContext>) {
        if let url = contexts.first?.url { open(url) }
    }

    private func open(_ url: URL) {
        guard url.scheme == "countersign", let tabs = window?.rootViewController as? UITabBarController else { return }
        tabs.selectedIndex = 1
        let enroll = EnrollViewController()
        (tabs.selectedViewController as? UINavigationController)?.pushViewController(enroll, animated: true)
        Task { await enroll.enroll(text: url.absoluteString) }
    }

    func presentApproval(of request: ApprovalRequest) {
        guard let tabs = window?.rootViewController as? UITabBarController else { return }
        tabs.selectedIndex = 0
        inbox.open(request)
    }
}
