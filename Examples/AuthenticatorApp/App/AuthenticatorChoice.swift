import CountersignCore
import CountersignKit
import UIKit

/// The SDK's picker and interstitials when a request can be approved in several ways
/// (`[[biometric], [pin, number-match]]`): an action sheet of the alternatives, and a step
/// screen between factors.
@MainActor final class AuthenticatorChoice: AuthenticatorPicker, InterstitialDelegate {
    weak var window: UIWindow?
    /// The screen asking, when there is one (the approval screen sets itself).
    weak var presenter: UIViewController?

    private var host: UIViewController? { presenter ?? window?.rootViewController }

    func pick(among groups: [AuthenticatorGroup], for details: RequestDetails) async -> AuthenticatorPick {
        guard let host else { return .cancel }
        let titles = groups.map { group in
            let title = group.options.map(\.title).joined(separator: " then ")
            return group.isAvailable ? title : "\(title) (set up \(group.missingFactors.map(\.policyName).joined(separator: ", ")) first)"
        }
        guard let index = await host.choose(title: "Approve with", message: details.bindingMessage, actions: titles,
                                            style: .actionSheet) else { return .cancel }
        return .alternative(groups[index].index)
    }

    func interstitial(before step: AuthenticatorStep, in ceremony: Ceremony) async -> Interstitial? {
        Interstitial(title: "Step \(step.index + 1) of \(step.total)", message: AuthenticatorOption(factor: step.nextFactor).description)
    }
}
