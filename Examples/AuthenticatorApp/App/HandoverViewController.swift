import AuthenticatorAppModel
import CoreImage
import CountersignKit
import UIKit

/// Moving to a new phone, on this (the old) one: the QR code for the new phone to scan, then its
/// name and three numbers to pick the one it shows. The move is checked every two seconds.
final class HandoverViewController: UIViewController {
    private let enrollmentID: Enrollment.ID
    private let retire: Bool
    private var screen: HandoverScreen?
    private var polling: Task<Void, Never>?
    private let stack = UIStackView()
    private let services = AppServices.shared

    init(enrollmentID: Enrollment.ID, retire: Bool) {
        self.enrollmentID = enrollmentID
        self.retire = retire
        super.init(nibName: nil, bundle: nil)
    }

    @available(*, unavailable)
    required init?(coder: NSCoder) { fatalError("not used with storyboards") }

    override func viewDidLoad() {
        super.viewDidLoad()
        title = "Move to a new phone"
        view.backgroundColor = .systemBackground
        stack.axis = .vertical
        stack.spacing = 16
        stack.alignment = .center
        stack.translatesAutoresizingMaskIntoConstraints = false
        view.addSubview(stack)
        NSLayoutConstraint.activate([
            stack.centerYAnchor.constraint(equalTo: view.safeAreaLayoutGuide.centerYAnchor),
            stack.leadingAnchor.constraint(equalTo: view.layoutMarginsGuide.leadingAnchor),
            stack.trailingAnchor.constraint(equalTo: view.layoutMarginsGuide.trailingAnchor),
        ])
        navigationItem.rightBarButtonItem = UIBarButtonItem(systemItem: .cancel, primaryAction: UIAction { [weak self] _ in
            Task { await self?.cancel() }
        })
        Task { await start() }
    }

    override func viewDidDisappear(_ animated: Bool) {
        super.viewDidDisappear(animated)
        polling?.cancel()
    }

    private func start() async {
        switch await HandoverScreen.start(enrollmentID, retire: retire, with: services.authenticator) {
        case .success(let started):
            show(started)
            polling = Task { [weak self] in await self?.poll() }
        case .failure(let problem):
            await show(problem)
            navigationController?.popViewController(animated: true)
        }
    }

    /// Every two seconds while the code is shown, until a phone has scanned it.
    private func poll() async {
        while !Task.isCancelled, let current = screen, case .showCode = current.stage {
            try? await Task.sleep(for: .seconds(2))
            guard !Task.isCancelled else { return }
            show(await current.refreshed(with: services.authenticator))
        }
    }

    private func cancel() async {
        polling?.cancel()
        if let screen, case .done = screen.stage {} else if let screen {
            _ = await screen.cancelled(with: services.authenticator)
        }
        navigationController?.popViewController(animated: true)
    }

    private func show(_ screen: HandoverScreen) {
        self.screen = screen
        stack.arrangedSubviews.forEach { $0.removeFromSuperview() }
        switch screen.stage {
        case .showCode(let uri):
            stack.addArrangedSubview(label("Scan this with your new phone, in this app's Add Account.", style: .headline))
            if let image = Self.qrCode(uri) {
                let view = UIImageView(image: image)
                view.layer.magnificationFilter = .nearest
                view.widthAnchor.constraint(equalToConstant: 240).isActive = true
                view.heightAnchor.constraint(equalToConstant: 240).isActive = true
                stack.addArrangedSubview(view)
            }
            stack.addArrangedSubview(label("The code works once, for ten minutes.", style: .footnote))
        case .pickNumber(let deviceName, let choices):
            stack.addArrangedSubview(label("Add \(deviceName)?", style: .title2))
            stack.addArrangedSubview(label("Pick the number it shows. If it is not your phone, cancel.", style: .body))
            let row = UIStackView()
            row.spacing = 12
            row.distribution = .fillEqually
            for choice in choices {
                var configuration = UIButton.Configuration.borderedProminent()
                configuration.title = choice
                row.addArrangedSubview(UIButton(configuration: configuration, primaryAction: UIAction { [weak self] _ in
                    Task { await self?.pick(choice) }
                }))
            }
            stack.addArrangedSubview(row)
        case .done(let title, let message, _):
            stack.addArrangedSubview(label(title, style: .title2))
            stack.addArrangedSubview(label(message, style: .body))
            navigationItem.rightBarButtonItem = UIBarButtonItem(systemItem: .done, primaryAction: UIAction { [weak self] _ in
                self?.navigationController?.popViewController(animated: true)
            })
        }
    }

    private func pick(_ number: String) async {
        guard let screen else { return }
        show(await screen.picked(number, with: services.authenticator))
    }

    private func label(_ text: String, style: UIFont.TextStyle) -> UILabel {
        let label = UILabel()
        label.text = text
        label.font = .preferredFont(forTextStyle: style)
        label.numberOfLines = 0
        label.textAlignment = .center
        return label
    }

    /// The URI as a QR code, scaled without smoothing.
    private static func qrCode(_ text: String) -> UIImage? {
        guard let filter = CIFilter(name: "CIQRCodeGenerator") else { return nil }
        filter.setValue(Data(text.utf8), forKey: "inputMessage")
        filter.setValue("M", forKey: "inputCorrectionLevel")
        guard let output = filter.outputImage?.transformed(by: CGAffineTransform(scaleX: 8, y: 8)),
              let image = CIContext().createCGImage(output, from: output.extent) else { return nil }
        return UIImage(cgImage: image)
    }
}
