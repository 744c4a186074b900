import AuthenticatorAppModel
import CountersignKit
import UIKit

/// One-time codes, for signing in where a push cannot reach the phone: each account's current
/// code and the seconds it has left, refreshed every second.
final class CodesViewController: UITableViewController {
    private var accounts = AccountList([])
    private var codes: [Enrollment.ID: Result<OneTimeCodeDisplay, ProblemMessage>] = [:]
    private var timer: Timer?
    private let services = AppServices.shared

    override func viewDidLoad() {
        super.viewDidLoad()
        title = "Codes"
        tabBarItem = UITabBarItem(title: "Codes", image: UIImage(systemName: "number"), tag: 2)
        tableView.register(UITableViewCell.self, forCellReuseIdentifier: "code")
    }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        timer = Timer.scheduledTimer(withTimeInterval: 1, repeats: true) { [weak self] _ in
            Task { @MainActor in await self?.refresh() }
        }
        Task { await refresh() }
    }

    override func viewWillDisappear(_ animated: Bool) {
        super.viewWillDisappear(animated)
        timer?.invalidate()
    }

    private func refresh() async {
        if case .success(let loaded) = await AccountList.load(services.authenticator) { accounts = loaded }
        for row in accounts.rows {
            codes[row.id] = await OneTimeCodeDisplay.current(for: row.id, with: services.authenticator)
        }
        tableView.reloadData()
    }

    override func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int { accounts.rows.count }

    override func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
        let cell = tableView.dequeueReusableCell(withIdentifier: "code", for: indexPath)
        let row = accounts.rows[indexPath.row]
        var content = cell.defaultContentConfiguration()
        switch codes[row.id] {
        case .success(let code)?:
            content.text = code.code
            content.textProperties.font = .monospacedDigitSystemFont(ofSize: 34, weight: .medium)
            content.secondaryText = "\(row.title) · \(code.secondsLeft) s"
        case .failure(let problem)?:
            content.text = row.title
            content.secondaryText = problem.explanation
        case nil:
            content.text = row.title
        }
        cell.contentConfiguration = content
        return cell
    }
}
