import CountersignCore
import Foundation

/// The app's side of answering a request (`CountersignAuthenticator.respond(to:with:)`): one
/// method per challenge the request can put to the user. The SDK calls only the one the
/// request requires, plus `enterPIN` when a PIN is asked instead (a wrong PIN, a fallback), and
/// does the signing and the talking to the server itself.
///
/// Each method returns the user's answer; returning a `cancel` answer denies the request with
/// the reason `cancelled` and ends the walk with `CountersignError.actionCancelled`.
///
/// ```swift
/// @MainActor final class ApprovalScreen: ChallengeHandler {
///     func confirm(_ challenge: ConfirmationChallenge) async -> ConfirmationAnswer {
///         await askToApprove(challenge.details) ? .confirm : .deny
///     }
///     func matchNumber(_ challenge: NumberMatchChallenge) async -> NumberMatchAnswer {
///         await pickNumber(among: challenge.choices).map(NumberMatchAnswer.number) ?? .cancel
///     }
///     func enterPIN(_ challenge: PINChallenge) async -> PINAnswer {
///         await askPIN(attemptsLeft: challenge.attemptsRemaining).map(PINAnswer.pin) ?? .cancel
///     }
///     func verifyBiometric(_ challenge: BiometricChallenge) async -> BiometricAnswer {
///         .prompt("Approve sign-in to \(challenge.details.clientName)")
///     }
///     func provideCustomData(_ challenge: CustomChallenge) async -> CustomAnswer {
///         await runCustomStep(challenge.details).map(CustomAnswer.data) ?? .cancel
///     }
/// }
/// ```
public protocol ChallengeHandler: Sendable {
    /// The request requires a confirmation: approve or deny.
    func confirm(_ challenge: ConfirmationChallenge) async -> ConfirmationAnswer
    /// The request requires the number the relying party shows.
    func matchNumber(_ challenge: NumberMatchChallenge) async -> NumberMatchAnswer
    /// The request requires the PIN, or the PIN is asked instead of another factor, or again
    /// after a wrong one.
    func enterPIN(_ challenge: PINChallenge) async -> PINAnswer
    /// The request requires a biometric check.
    func verifyBiometric(_ challenge: BiometricChallenge) async -> BiometricAnswer
    /// The request requires the app's own authenticator, whose data the tenant's verifier judges.
    func provideCustomData(_ challenge: CustomChallenge) async -> CustomAnswer
    /// Between two factors of an alternative: show the screen the app's `InterstitialDelegate`
    /// gave. By default the walk goes straight on.
    func present(_ interstitial: Interstitial, at step: AuthenticatorStep) async -> InterstitialAnswer
}

extension ChallengeHandler {
    public func present(_ interstitial: Interstitial, at step: AuthenticatorStep) async -> InterstitialAnswer {
        .proceed
    }
}

/// A request that asks only for the user's yes or no.
public struct ConfirmationChallenge: Sendable, Equatable {
    public let details: RequestDetails
}

public enum ConfirmationAnswer: Sendable, Equatable {
    /// Approve.
    case confirm
    /// Deny (reason `declined`).
    case deny
    /// Deny as "I did not request this" (reason `not_requested`): possible fraud.
    case notRequested
}

/// A request that asks for the number the relying party shows on its screen.
public struct NumberMatchChallenge: Sendable, Equatable {
    public let details: RequestDetails
    /// The numbers to offer; nil when the user types the number.
    public var choices: [Int64]? { details.numberChoices }
    /// How many digits the number has.
    public var digits: Int { details.numberDigits }
}

public enum NumberMatchAnswer: Sendable, Equatable {
    /// The number the user picked or typed. A wrong one denies the request (`wrong_number`).
    case number(Int64)
    case cancel
}

/// A request for the user's PIN.
public struct PINChallenge: Sendable, Equatable {
    /// Why the PIN is asked.
    public enum Reason: Sendable, Equatable {
        /// The request requires it.
        case required
        /// Instead of a biometric or custom check: the user chose it, or the check failed.
        case fallback
        /// The tenant's verifier of custom data asked for it.
        case verifierRequested
        /// A new PIN, to add to the enrollment (`enrollFactors(for:with:)`): ask for it twice.
        case setUp
    }

    public let details: RequestDetails
    public let reason: Reason
    /// How many wrong PINs were entered for this request so far.
    public let failedAttempts: Int
    /// After a wrong PIN: how many more the server accepts before it removes the enrollment.
    public let attemptsRemaining: Int?
}

public enum PINAnswer: Sendable, Equatable {
    /// The PIN, 4 to 12 digits.
    case pin(String)
    case cancel
}

/// A request that requires a biometric check, which signs the answer with the biometric key.
public struct BiometricChallenge: Sendable, Equatable {
    public let details: RequestDetails
    /// Whether the request accepts the PIN instead, and this enrollment has one.
    public let pinFallbackAllowed: Bool
    /// The biometry the platform will use, when it can tell.
    public let biometry: Biometry?

    /// The text shown in the system's biometric prompt when the handler gives none.
    public var defaultPrompt: String { "Approve the request of \(details.clientName)" }
}

public enum BiometricAnswer: Sendable, Equatable {
    /// Check now, with `BiometricChallenge.defaultPrompt`.
    case defaultPrompt
    /// Check now, with this text in the system's prompt.
    case prompt(String)
    /// Use the PIN instead (only when `pinFallbackAllowed`).
    case pinFallback
    case cancel
}

/// A request that requires the app's own authenticator.
public struct CustomChallenge: Sendable, Equatable {
    public let details: RequestDetails
    /// Whether the request accepts the PIN instead, and this enrollment has one.
    public let pinFallbackAllowed: Bool
}

public enum CustomAnswer: Sendable, Equatable {
    /// The data for the tenant's verifier, at most `ApprovalResponse.maximumCustomDataLength`
    /// bytes of UTF-8.
    case data(String)
    /// Use the PIN instead (only when `pinFallbackAllowed`).
    case pinFallback
    case cancel
}

/// How a request ended, as the server decided it.
///
/// ```swift
/// switch try await authenticator.respond(to: request, with: handler) {
/// case .approved: showDone()
/// case .denied(.wrongNumber, _): showWrongNumber()
/// case .denied(let reason, _): showDenied(reason)
/// }
/// ```
public enum ApprovalOutcome: Sendable, Equatable {
    case approved(ApprovalAcknowledgement)
    /// Denied by the user (`declined`, `not_requested`) or by the server (`wrong_number`,
    /// `custom_rejected`).
    case denied(DenyReason, ApprovalAcknowledgement)

    public var acknowledgement: ApprovalAcknowledgement {
        switch self {
        case .approved(let acknowledgement), .denied(_, let acknowledgement): acknowledgement
        }
    }

    init(_ acknowledgement: ApprovalAcknowledgement) throws(CountersignError) {
        switch acknowledgement.status {
        case "approved": self = .approved(acknowledgement)
        case "denied": self = .denied(acknowledgement.reason ?? .declined, acknowledgement)
        default: throw .invalidServerResponse("the acknowledgement's status is \(acknowledgement.status)")
        }
    }
}
