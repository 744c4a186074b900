import CountersignCore
import CountersignKit
import Foundation
import Synchronization

/// The terminal as the user's side of `device approve` and of `device watch`: the user has
/// already said yes (by running the command, or typing `y`), so a confirmation is given at once;
/// a number, a PIN or custom data is taken from the command line or asked on the terminal.
struct TerminalChallenges: ChallengeHandler {
    /// The number given with `--number`, else asked.
    let number: Int64?
    /// The data given with `--custom-data`, else asked.
    let customData: String?
    /// Where the PIN comes from.
    let pins: PINSource
    /// Use the PIN instead of a biometric or custom check where the request allows it.
    let preferPIN: Bool
    /// Where a refused scripted PIN is noted, for the command to report it.
    var refusals = PINRefusals()
    /// Where what is asked is answered.
    var answers: any TerminalAnswers = StandardInputAnswers()

    func confirm(_ challenge: ConfirmationChallenge) async -> ConfirmationAnswer {
        .confirm
    }

    func matchNumber(_ challenge: NumberMatchChallenge) async -> NumberMatchAnswer {
        if let number { return .number(number) }
        if let choices = challenge.choices {
            Terminal.say("Which number does the other screen show? " + choices.map { "[\($0)]" }.joined(separator: " "))
        } else {
            Terminal.say("Type the \(challenge.digits)-digit number the other screen shows.")
        }
        let line = await answers.line("Number (empty to cancel): ")?.trimmingCharacters(in: .whitespaces) ?? ""
        guard let number = Int64(line) else { return .cancel }
        return .number(number)
    }

    /// A scripted PIN is tried once: trying the same wrong PIN again would only spend the
    /// attempts left until the server removes the enrollment.
    func enterPIN(_ challenge: PINChallenge) async -> PINAnswer {
        if pins.isScripted, challenge.failedAttempts > 0 {
            refusals.noteScriptedPINRefused(attemptsRemaining: challenge.attemptsRemaining)
            return .cancel
        }
        if challenge.failedAttempts > 0 {
            let left = challenge.attemptsRemaining.map { " \($0) attempt\($0 == 1 ? "" : "s") left before the enrollment is removed." }
            Terminal.say("Wrong PIN." + (left ?? ""))
        }
        switch challenge.reason {
        case .required: break
        case .fallback: Terminal.say("Enter the PIN instead.")
        case .verifierRequested: Terminal.say("The verifier asks for the PIN.")
        case .setUp: Terminal.say("Choose a PIN for this enrollment.")
        }
        if pins.isScripted, let scripted = pins.scripted() {
            return .pin(scripted)
        }
        let pin = await answers.secret("PIN (empty to cancel): ") ?? ""
        return pin.isEmpty ? .cancel : .pin(pin)
    }

    func verifyBiometric(_ challenge: BiometricChallenge) async -> BiometricAnswer {
        preferPIN && challenge.pinFallbackAllowed ? .pinFallback : .defaultPrompt
    }

    func provideCustomData(_ challenge: CustomChallenge) async -> CustomAnswer {
        if let customData { return .data(customData) }
        if preferPIN && challenge.pinFallbackAllowed { return .pinFallback }
        let line = await answers.line("Data for the custom authenticator (empty to cancel): ") ?? ""
        return line.isEmpty ? .cancel : .data(line)
    }

    func present(_ interstitial: Interstitial, at step: AuthenticatorStep) async -> InterstitialAnswer {
        Terminal.say("\(interstitial.title): \(interstitial.message)")
        return .proceed
    }
}

/// What the server said of a PIN a script gave: the handler answers it by cancelling, and the
/// command then tells why.
final class PINRefusals: Sendable {
    struct Refusal {
        let attemptsRemaining: Int?

        /// "; 4 attempts left before the enrollment is removed", or nothing when the server did
        /// not say.
        var attemptsLeft: String {
            attemptsRemaining.map { "; \($0) attempt\($0 == 1 ? "" : "s") left before the enrollment is removed" } ?? ""
        }
    }

    private let refusal = Mutex<Refusal?>(nil)

    var scriptedPINRefused: Refusal? { refusal.withLock { $0 } }

    func noteScriptedPINRefused(attemptsRemaining: Int?) {
        refusal.withLock { $0 = Refusal(attemptsRemaining: attemptsRemaining) }
    }
}

/// The terminal's stand-in for a biometric check. A terminal has no biometric sensor, so the
/// "biometric" key is a software key in the device store, used after the user confirms on the
/// terminal: it shows the `biometric` factor end to end, and proves nothing about who typed.
enum BiometricStandIn {
    static let label = "biometric stand-in: a software key released by a terminal confirmation, not by biometry"

    static func keys() -> SoftwareBiometricKeys {
        SoftwareBiometricKeys(biometry: .other) { prompt in
            Terminal.say("[\(label)]")
            Terminal.say("\(RequestSummary.shown(prompt)) — confirm it is you [y/N]: ", terminator: "")
            let answer = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            switch answer {
            case "y", "yes": return .verified
            case "", "n", "no": return .cancelled
            default: return .failed
            }
        }
    }
}
