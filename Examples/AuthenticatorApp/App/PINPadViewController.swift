import AuthenticatorAppModel
import CountersignKit
import UIKit

/// A PIN pad: ten digit keys, delete, and OK once 4 to 12 digits are in (`PINEntry`). The
/// digits are shown as dots; a new PIN is asked twice.
final class PINPadViewController: UIViewController {
    private var entry: PINEntry
    private let prompt = UILabel()
    private let note = UILabel()
    private let dots = UILabel()
    private let ok = UIButton(configuration: .borderedProminent())
    private var answer: CheckedContinuation<PINAnswer, Never>?

    /// Shows the pad over `host` until the user sends a PIN or cancels.
    static func ask(_ entry: PINEntry, from host: UIViewController) async -> PINAnswer {
        await withCheckedContinuation { continuation in
            let pad = PINPadViewController(entry: entry)
            pad.answer = continuation
            host.topmost.present(UINavigationController(rootViewController: pad), animated: true)
        }
    }

    private init(entry: PINEntry) {
        self.entry = entry
        super.init(nibName: nil, bundle: nil)
    }

    required init?(coder: NSCoder) { nil }

    override func viewDidLoad() {
        super.viewDidLoad()
        view.backgroundColor = .systemBackground
        navigationItem.leftBarButtonItem = UIBarButtonItem(systemItem: .cancel, primaryAction: UIAction { [weak self] _ in
            self?.end(.cancel)
        })
        let keys = UIStackView()
        keys.axis = .vertical
        keys.spacing = 8
        for row in [["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"], ["⌫", "0", "OK"]] {
            let line = UIStackView()
            line.distribution = .fillEqually
            line.spacing = 8
            for key in row {
                let button = key == "OK" ? ok : UIButton(configuration: .gray())
                button.configuration?.title = key
                button.addAction(UIAction { [weak self] _ in self?.press(key) }, for: .touchUpInside)
                if key == "⌫" { button.accessibilityLabel = "Delete" }
                line.addArrangedSubview(button)
            }
            keys.addArrangedSubview(line)
        }
        note.textColor = .systemRed
        for label in [prompt, note, dots] {
            label.textAlignment = .center
            label.numberOfLines = 0
        }
        dots.font = .preferredFont(forTextStyle: .largeTitle)
        let stack = UIStackView(arrangedSubviews: [prompt, note, dots, keys])
        stack.axis = .vertical
        stack.spacing = 16
        stack.translatesAutoresizingMaskIntoConstraints = false
        view.addSubview(stack)
        NSLayoutConstraint.activate([
            stack.leadingAnchor.constraint(equalTo: view.layoutMarginsGuide.leadingAnchor),
            stack.trailingAnchor.constraint(equalTo: view.layoutMarginsGuide.trailingAnchor),
            stack.centerYAnchor.constraint(equalTo: view.centerYAnchor),
        ])
        render()
    }

    private func press(_ key: String) {
        switch key {
        case "⌫": entry.deleteBackward()
        case "OK": if let pin = entry.submit() { end(.pin(pin)); return }
        default: if let digit = key.first { entry.type(digit) }
        }
        render()
    }

    private func render() {
        prompt.text = entry.prompt
        note.text = entry.note
        dots.text = String(repeating: "●", count: entry.digits.count)
        dots.accessibilityLabel = "\(entry.digits.count) digits"
        ok.isEnabled = entry.canSubmit
    }

    private func end(_ result: PINAnswer) {
        answer?.resume(returning: result)
        answer = nil
        dismiss(animated: true)
    }
}
