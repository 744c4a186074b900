import AuthenticatorAppModel
import CountersignKit
import UIKit

/// The passkeys this app holds as a platform authenticator (`PasskeyAuthenticator`): listed by
/// site and account, and deletable. Sites' sign-in journeys hand the app WebAuthn options and
/// get the answers back through the SDK; when several passkeys fit, `PasskeyPicker` asks.
final class PasskeysViewController: UITableViewController {
    private var credentials: [PasskeyCredential] = []
    private let services = AppServices.shared

    override func viewDidLoad() {
        super.viewDidLoad()
        title = "Passkeys"
        tableView.register(UITableViewCell.self, forCellReuseIdentifier: "passkey")
    }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        Task { await reload() }
    }

    private func reload() async {
        do {
            credentials = try await services.passkeys.credentials()
        } catch {
            await choose(title: "Passkeys unavailable", message: error.description, actions: ["OK"], cancel: nil)
        }
        tableView.reloadData()
    }

    override func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int { credentials.count }

    override func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
        let cell = tableView.dequeueReusableCell(withIdentifier: "passkey", for: indexPath)
        let credential = credentials[indexPath.row]
        var content = cell.defaultContentConfiguration()
        content.text = credential.rpID
        content.secondaryText = credential.user.displayName.isEmpty ? credential.user.name : credential.user.displayName
        cell.contentConfiguration = content
        return cell
    }

    override func tableView(
        _ tableView: UITableView, trailingSwipeActionsConfigurationForRowAt indexPath: IndexPath
    ) -> UISwipeActionsConfiguration? {
        let credential = credentials[indexPath.row]
        let delete = UIContextualAction(style: .destructive, title: "Delete") { [weak self] _, _, done in
            Task {
                try? await self?.services.passkeys.delete(credential)
                await self?.reload()
                done(true)
            }
        }
        return UISwipeActionsConfiguration(actions: [delete])
    }
}

/// The credential picker: an action sheet of the passkeys that fit, named as the SDK names
/// them (display name and when it was made).
struct PasskeyPicker: PasskeyCredentialSelector {
    func selectCredential(keyNames: [String]) async -> String? {
        await Self.ask(keyNames)
    }

    @MainActor private static func ask(_ keyNames: [String]) async -> String? {
        guard let host = AppServices.shared.choice.window?.rootViewController else { return nil }
        return await host.choose(title: "Sign in with", message: nil, actions: keyNames, style: .actionSheet).map { keyNames[$0] }
    }
}
