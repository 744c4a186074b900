import AuthenticatorAppModel
import UIKit

/// The alerts every screen uses, awaited: the SDK asks, the user answers, the SDK goes on.
extension UIViewController {
    /// Shows `problem` with its next step as the button; returns whether that button was tapped
    /// (rather than Cancel, offered when the step is something to do).
    @discardableResult
    func show(_ problem: ProblemMessage) async -> Bool {
        let offersAction = problem.nextStep != .dismiss && problem.nextStep.buttonTitle != "OK"
        return await choose(title: problem.title, message: problem.explanation,
                            actions: offersAction ? [problem.nextStep.buttonTitle] : ["OK"], cancel: offersAction ? "Cancel" : nil) == 0
    }

    /// An alert or action sheet with `actions`; the index of the one tapped, or nil for `cancel`.
    @discardableResult
    func choose(
        title: String?, message: String?, actions: [String], cancel: String? = "Cancel", style: UIAlertController.Style = .alert,
        destructive: Set<Int> = []
    ) async -> Int? {
        await withCheckedContinuation { continuation in
            let alert = UIAlertController(title: title, message: message, preferredStyle: style)
            for (index, action) in actions.enumerated() {
                alert.addAction(UIAlertAction(title: action, style: destructive.contains(index) ? .destructive : .default) { _ in
                    continuation.resume(returning: index)
                })
            }
            if let cancel {
                alert.addAction(UIAlertAction(title: cancel, style: .cancel) { _ in continuation.resume(returning: nil) })
            }
            topmost.present(alert, animated: true)
        }
    }

    /// A one-line text field in an alert; nil when cancelled.
    func askText(title: String, message: String?, placeholder: String, initial: String = "", secure: Bool = false) async -> String? {
        await withCheckedContinuation { continuation in
            let alert = UIAlertController(title: title, message: message, preferredStyle: .alert)
            alert.addTextField { field in
                field.placeholder = placeholder
                field.text = initial
                field.isSecureTextEntry = secure
            }
            alert.addAction(UIAlertAction(title: "Cancel", style: .cancel) { _ in continuation.resume(returning: nil) })
            alert.addAction(UIAlertAction(title: "OK", style: .default) { [weak alert] _ in
                continuation.resume(returning: alert?.textFields?.first?.text ?? "")
            })
            topmost.present(alert, animated: true)
        }
    }

    /// The view controller presented last above this one, where a new alert must go.
    var topmost: UIViewController {
        var top: UIViewController = self
        while let presented = top.presentedViewController { top = presented }
        return top
    }
}
