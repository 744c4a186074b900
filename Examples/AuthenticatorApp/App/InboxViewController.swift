import AuthenticatorAppModel
import CountersignKit
import UIKit

/// The requests waiting for this phone, for when a push did not arrive; kept current by each
/// account's live stream while the screen is shown.
final class InboxViewController: UITableViewController {
    private var inbox = Inbox()
    private var streams: [Task<Void, Never>] = []
    private let services = AppServices.shared

    override func viewDidLoad() {
        super.viewDidLoad()
        title = "Requests"
        tabBarItem = UITabBarItem(title: "Requests", image: UIImage(systemName: "tray"), tag: 0)
        tableView.register(UITableViewCell.self, forCellReuseIdentifier: "request")
        refreshControl = UIRefreshControl()
        refreshControl?.addAction(UIAction { [weak self] _ in Task { await self?.reload() } }, for: .valueChanged)
    }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        Task {
            await reload()
            await listen()
        }
    }

    override func viewDidDisappear(_ animated: Bool) {
        super.viewDidDisappear(animated)
        streams.forEach { $0.cancel() }
        streams = []
    }

    private func reload() async {
        switch await Inbox.load(services.authenticator) {
        case .success(let loaded): update(loaded)
        case .failure(let problem): await show(problem)
        }
        refreshControl?.endRefreshing()
    }

    /// One live stream per account; each ends every half hour or so and is opened again.
    private func listen() async {
        streams.forEach { $0.cancel() }
        let enrollments = (try? await services.authenticator.enrollments()) ?? []
        streams = enrollments.map { enrollment in
            Task { [weak self, authenticator = services.authenticator] in
                while !Task.isCancelled {
                    do {
                        for try await event in authenticator.liveRequests(enrollment.id) { self?.apply(event) }
                    } catch let error as CountersignError
                        where [.deviceDeregistered, .userDeregistered, .userDisenrolled].contains(error) {
                        return  // the enrollment is gone; the accounts screen says so
                    } catch {
                        try? await Task.sleep(for: .seconds(5))
                    }
                }
            }
        }
    }

    private func apply(_ event: LiveRequestEvent) {
        if case .notice(let notice) = event {
            Task { await ask(about: notice) }
            return
        }
        var next = inbox
        next.apply(event)
        update(next)
    }

    /// A notice heard on the stream while this screen is open (a device without push hears of it
    /// only so): the question its push asks.
    private func ask(about notice: SecurityNotice) async {
        let choice = await choose(title: "Your account changed", message: notice.summary, actions: ["Not me"],
                                  cancel: "It was me", destructive: [0])
        guard choice == 0 else { return }
        let answer = await NoticeAnswer.reportNotMe(notice, with: services.authenticator)
        await choose(title: answer.title, message: answer.body, actions: ["OK"], cancel: nil)
    }

    private func update(_ next: Inbox) {
        inbox = next
        navigationController?.tabBarItem.badgeValue = inbox.badge
        tableView.reloadData()
    }

    override func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int {
        inbox.requests.count
    }

    override func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
        let cell = tableView.dequeueReusableCell(withIdentifier: "request", for: indexPath)
        let request = inbox.requests[indexPath.row]
        var content = cell.defaultContentConfiguration()
        content.text = "Request waiting"
        content.secondaryText = "Until \(request.expiresAt.formatted(date: .omitted, time: .shortened))"
        cell.contentConfiguration = content
        cell.accessoryType = .disclosureIndicator
        return cell
    }

    override func tableView(_ tableView: UITableView, didSelectRowAt indexPath: IndexPath) {
        open(inbox.requests[indexPath.row])
    }

    func open(_ request: ApprovalRequest) {
        let approval = ApprovalViewController(request: request)
        navigationController?.pushViewController(approval, animated: true)
    }
}
