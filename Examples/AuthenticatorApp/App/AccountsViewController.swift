import AuthenticatorAppModel
import CountersignKit
import UIKit

/// The accounts this phone approves for (one per enrollment, on one or several servers):
/// rename this phone as an account sees it, remove it, add an account, and the passkeys.
final class AccountsViewController: UITableViewController {
    private var list = AccountList([])
    private let services = AppServices.shared

    override func viewDidLoad() {
        super.viewDidLoad()
        title = "Accounts"
        tabBarItem = UITabBarItem(title: "Accounts", image: UIImage(systemName: "person.crop.circle"), tag: 1)
        tableView.register(UITableViewCell.self, forCellReuseIdentifier: "account")
        navigationItem.rightBarButtonItem = UIBarButtonItem(systemItem: .add, primaryAction: UIAction { [weak self] _ in
            self?.navigationController?.pushViewController(EnrollViewController(), animated: true)
        })
        navigationItem.leftBarButtonItem = UIBarButtonItem(title: "Passkeys", primaryAction: UIAction { [weak self] _ in
            self?.navigationController?.pushViewController(PasskeysViewController(), animated: true)
        })
    }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        Task { await reload() }
    }

    private func reload() async {
        switch await AccountList.load(services.authenticator) {
        case .success(let loaded):
            list = loaded
            tableView.reloadData()
        case .failure(let problem):
            await show(problem)
        }
    }

    override func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int { list.rows.count }

    override func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
        let cell = tableView.dequeueReusableCell(withIdentifier: "account", for: indexPath)
        var content = cell.defaultContentConfiguration()
        content.text = list.rows[indexPath.row].title
        content.secondaryText = list.rows[indexPath.row].subtitle
        cell.contentConfiguration = content
        return cell
    }

    override func tableView(
        _ tableView: UITableView, trailingSwipeActionsConfigurationForRowAt indexPath: IndexPath
    ) -> UISwipeActionsConfiguration? {
        let row = list.rows[indexPath.row]
        let remove = UIContextualAction(style: .destructive, title: "Remove") { [weak self] _, _, done in
            Task { await self?.remove(row); done(true) }
        }
        let rename = UIContextualAction(style: .normal, title: "Rename") { [weak self] _, _, done in
            Task { await self?.rename(row); done(true) }
        }
        let move = UIContextualAction(style: .normal, title: "New phone") { [weak self] _, _, done in
            Task { await self?.moveToNewPhone(row); done(true) }
        }
        return UISwipeActionsConfiguration(actions: [remove, rename, move])
    }

    /// Moving this account to a new phone, approved here; this phone may keep approving or stop.
    private func moveToNewPhone(_ row: AccountList.Row) async {
        guard let choice = await choose(
            title: "Move \(row.title) to a new phone?",
            message: "The new phone scans a code shown here, then you pick the number it shows.",
            actions: ["Keep this phone too", "Stop using this phone"]) else { return }
        navigationController?.pushViewController(HandoverViewController(enrollmentID: row.id, retire: choice == 1), animated: true)
    }

    private func rename(_ row: AccountList.Row) async {
        guard let name = await askText(title: "Rename this phone", message: "The name \(row.title)'s account shows for it.",
                                       placeholder: "Name") else { return }
        if let problem = await AccountList.rename(row.id, to: name, with: services.authenticator) { await show(problem) }
        await reload()
    }

    private func remove(_ row: AccountList.Row) async {
        guard await choose(title: "Remove \(row.title)?", message: "This phone will no longer approve sign-ins for this account.",
                           actions: ["Remove"], destructive: [0]) != nil else { return }
        if let problem = await AccountList.remove(row.id, with: services.authenticator) { await show(problem) }
        await reload()
    }
}
