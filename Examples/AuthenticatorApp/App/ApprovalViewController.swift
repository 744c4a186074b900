import AuthenticatorAppModel
import CountersignCore
import CountersignKit
import UIKit

/// One request: the sealed details as the SDK opened them, Approve, Deny and "This wasn't me".
/// Approving walks the request's factors through the SDK; this screen is its `ChallengeHandler`,
/// asking the user for the number, the PIN, the biometric check or the app's own factor.
final class ApprovalViewController: UIViewController, ChallengeHandler {
    private let request: ApprovalRequest
    private var details: RequestDetails?
    private var summary: RequestSummary?
    private let stack = UIStackView()
    private let countdown = UILabel()
    private var timer: Timer?
    private let services = AppServices.shared

    init(request: ApprovalRequest) {
        self.request = request
        super.init(nibName: nil, bundle: nil)
    }

    required init?(coder: NSCoder) { nil }

    override func viewDidLoad() {
        super.viewDidLoad()
        view.backgroundColor = .systemBackground
        title = "Approve?"
        stack.axis = .vertical
        stack.spacing = 12
        stack.translatesAutoresizingMaskIntoConstraints = false
        view.addSubview(stack)
        NSLayoutConstraint.activate([
            stack.leadingAnchor.constraint(equalTo: view.layoutMarginsGuide.leadingAnchor),
            stack.trailingAnchor.constraint(equalTo: view.layoutMarginsGuide.trailingAnchor),
            stack.topAnchor.constraint(equalTo: view.safeAreaLayoutGuide.topAnchor, constant: 24),
        ])
        services.choice.presenter = self
        Task { await load() }
    }

    override func viewDidDisappear(_ animated: Bool) {
        super.viewDidDisappear(animated)
        timer?.invalidate()
    }

    private func load() async {
        do {
            let details = try await services.authenticator.details(for: request)
            self.details = details
            show(RequestSummary(details))
        } catch {
            await show(ProblemMessage(error))
            navigationController?.popViewController(animated: true)
        }
    }

    private func show(_ summary: RequestSummary) {
        self.summary = summary
        let title = UILabel()
        title.text = summary.title
        title.font = .preferredFont(forTextStyle: .title2)
        title.numberOfLines = 0
        stack.addArrangedSubview(title)
        if let message = summary.bindingMessage {
            let binding = UILabel()
            binding.text = "“\(message)”"
            binding.font = .preferredFont(forTextStyle: .title1)
            binding.numberOfLines = 0
            binding.accessibilityLabel = "Message: \(message). Check that it is the one on your other screen."
            stack.addArrangedSubview(binding)
        }
        for row in summary.rows {
            let label = UILabel()
            label.text = "\(row.label): \(row.value)"
            label.numberOfLines = 0
            label.textColor = .secondaryLabel
            stack.addArrangedSubview(label)
        }
        countdown.textColor = .secondaryLabel
        stack.addArrangedSubview(countdown)
        timer = Timer.scheduledTimer(withTimeInterval: 1, repeats: true) { [weak self] _ in
            MainActor.assumeIsolated { self?.tick() }
        }
        tick()
        stack.addArrangedSubview(button("Approve", style: .borderedProminent()) { [weak self] in await self?.approve() })
        for refusal in RequestSummary.refusals {
            stack.addArrangedSubview(button(refusal.title, style: .bordered()) { [weak self] in await self?.refuse(refusal) })
        }
    }

    private func tick() {
        guard let summary else { return }
        countdown.text = summary.countdown(at: Date())
    }

    private func button(_ title: String, style: UIButton.Configuration, action: @escaping @MainActor () async -> Void) -> UIButton {
        var configuration = style
        configuration.title = title
        return UIButton(configuration: configuration, primaryAction: UIAction { _ in Task { await action() } })
    }

    private func approve() async {
        guard let details else { return }
        finish(await ApprovalResult.respond(to: details, with: services.authenticator, screen: self))
    }

    private func refuse(_ refusal: RequestSummary.Refusal) async {
        guard let details else { return }
        if refusal.reason == .notRequested,
           await choose(title: refusal.title, message: refusal.explanation, actions: ["Deny and Report"], destructive: [0]) == nil {
            return
        }
        finish(await ApprovalResult.refuse(details, refusal, with: services.authenticator))
    }

    private func finish(_ result: ApprovalResult) {
        Task {
            switch result {
            case .approved(let text): await choose(title: "Approved", message: text, actions: ["Done"], cancel: nil)
            case .denied(let text): await choose(title: "Denied", message: text, actions: ["Done"], cancel: nil)
            case .problem(let problem):
                await show(problem)
                if problem.nextStep == .tryAgain || problem.nextStep == .enterPINAgain { return }
            }
            navigationController?.popViewController(animated: true)
        }
    }

    // MARK: - ChallengeHandler: what only the user can give

    /// The user already tapped Approve on this screen.
    func confirm(_ challenge: ConfirmationChallenge) async -> ConfirmationAnswer { .confirm }

    func matchNumber(_ challenge: NumberMatchChallenge) async -> NumberMatchAnswer {
        await NumberMatchViewController.ask(NumberChoices(challenge), from: self)
    }

    func enterPIN(_ challenge: PINChallenge) async -> PINAnswer {
        await PINPadViewController.ask(PINEntry(challenge), from: self)
    }

    /// The SDK shows the system's Face ID or Touch ID prompt with this text; the PIN instead,
    /// where the request allows it, if the user would rather.
    func verifyBiometric(_ challenge: BiometricChallenge) async -> BiometricAnswer {
        guard challenge.pinFallbackAllowed else { return .prompt(challenge.defaultPrompt) }
        let name = challenge.biometry == .face ? "Face ID" : "Touch ID"
        switch await choose(title: "Approve with \(name)", message: nil, actions: [name, "Use PIN"]) {
        case 0: return .prompt(challenge.defaultPrompt)
        case 1: return .pinFallback
        default: return .cancel
        }
    }

    /// Between the factors of one way of approving: "Step 2 of 3: PIN", then on, or cancel
    /// (which denies the request as cancelled).
    func present(_ interstitial: Interstitial, at step: AuthenticatorStep) async -> InterstitialAnswer {
        await choose(title: interstitial.title, message: interstitial.message, actions: ["Continue"]) == 0 ? .proceed : .cancel
    }

    /// The app's own factor: here, a word the organisation gave the user, which its verifier
    /// checks (`CustomChallenge`); a real app would put its own check here.
    func provideCustomData(_ challenge: CustomChallenge) async -> CustomAnswer {
        guard let word = await askText(title: "Security word", message: "Enter the word your organisation gave you.",
                                       placeholder: "Word", secure: true) else {
            return challenge.pinFallbackAllowed ? .pinFallback : .cancel
        }
        return .data(word)
    }
}
