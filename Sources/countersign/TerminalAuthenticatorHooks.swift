import CountersignCore
import CountersignKit
import Foundation

/// The terminal's picker among a request's alternatives: a numbered menu, or the number given
/// with `--alternative`. Alternatives this enrollment cannot use are listed with what they lack.
struct TerminalPicker: AuthenticatorPicker {
    /// The menu number given on the command line (from 1).
    let scripted: Int?

    func pick(among groups: [AuthenticatorGroup], for details: RequestDetails) async -> AuthenticatorPick {
        if let scripted {
            guard groups.indices.contains(scripted - 1) else {
                Terminal.say("There is no alternative \(scripted); this request offers \(groups.count).")
                return .cancel
            }
            return .alternative(groups[scripted - 1].index)
        }
        Terminal.say("This request can be approved in \(groups.count) ways:")
        for (number, group) in zip(1..., groups) {
            let steps = group.factors.map(RequestSummary.name(of:)).joined(separator: " then ")
            let lacking = group.isAvailable
                ? "" : " (not enrolled here: \(group.missingFactors.map(\.policyName).joined(separator: ", ")))"
            Terminal.say("  [\(number)] \(steps)\(lacking)")
        }
        Terminal.say("Which one (empty to cancel): ", terminator: "")
        let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces) ?? ""
        guard let number = Int(line), groups.indices.contains(number - 1) else { return .cancel }
        return .alternative(groups[number - 1].index)
    }
}

/// One line before each factor after the first: "Step 2 of 3: PIN".
struct TerminalInterstitials: InterstitialDelegate {
    func interstitial(before step: AuthenticatorStep, in ceremony: Ceremony) async -> Interstitial? {
        Interstitial(title: "Step \(step.index + 1) of \(step.total)", message: RequestSummary.name(of: step.nextFactor))
    }
}
