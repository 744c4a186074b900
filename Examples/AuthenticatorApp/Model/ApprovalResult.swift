import CountersignCore
import CountersignKit

/// How one approval ended, as the app says it: the SDK's outcome, or its error as a
/// `ProblemMessage`.
public enum ApprovalResult: Sendable, Equatable {
    case approved(String)
    case denied(String)
    case problem(ProblemMessage)

    public init(_ outcome: ApprovalOutcome, client: String) {
        switch outcome {
        case .approved:
            self = .approved("Approved. You can go back to \(client).")
        case .denied(.notRequested, _):
            self = .denied("Denied and reported. If someone has your password, change it.")
        case .denied(.wrongNumber, _):
            self = .denied("Denied: that was not the number \(client) showed. If you are signing in, start again.")
        case .denied(.customRejected, _):
            self = .denied("Denied: your organisation's check did not accept this phone's answer.")
        case .denied(.declined, _), .denied(.cancelled, _):
            self = .denied("Denied.")
        }
    }

    /// Answers a request through the SDK, asking `screen` for what only the user can give.
    ///
    /// ```swift
    /// let result = await ApprovalResult.respond(to: details, with: authenticator, screen: self)
    /// ```
    public static func respond(
        to details: RequestDetails, with authenticator: CountersignAuthenticator, screen: some ChallengeHandler
    ) async -> ApprovalResult {
        do throws(CountersignError) {
            return ApprovalResult(try await authenticator.respond(toDetails: details, with: screen), client: details.clientName)
        } catch {
            return .problem(ProblemMessage(error))
        }
    }

    /// Approves from the notification's action: only a request that asks for nothing but a tap
    /// (`RequestDetails.isConfirmOnly`); any other is left for the app's approval screen (nil).
    public static func approveFromAlert(
        _ details: RequestDetails, with authenticator: CountersignAuthenticator
    ) async -> ApprovalResult? {
        guard details.isConfirmOnly else { return nil }
        return await respond(to: details, with: authenticator, screen: TapOnly())
    }

    /// The user's tap on Approve, and nothing else.
    private struct TapOnly: ChallengeHandler {
        func confirm(_ challenge: ConfirmationChallenge) async -> ConfirmationAnswer { .confirm }
        func matchNumber(_ challenge: NumberMatchChallenge) async -> NumberMatchAnswer { .cancel }
        func enterPIN(_ challenge: PINChallenge) async -> PINAnswer { .cancel }
        func verifyBiometric(_ challenge: BiometricChallenge) async -> BiometricAnswer { .cancel }
        func provideCustomData(_ challenge: CustomChallenge) async -> CustomAnswer { .cancel }
    }

    /// Says no with one of `RequestSummary.refusals`, without a challenge.
    public static func refuse(
        _ details: RequestDetails, _ refusal: RequestSummary.Refusal, with authenticator: CountersignAuthenticator
    ) async -> ApprovalResult {
        do throws(CountersignError) {
            _ = try await authenticator.deny(details, reason: refusal.reason)
            return refusal.reason == .notRequested
                ? .denied("Denied and reported. If someone has your password, change it.") : .denied("Denied.")
        } catch {
            return .problem(ProblemMessage(error))
        }
    }
}
