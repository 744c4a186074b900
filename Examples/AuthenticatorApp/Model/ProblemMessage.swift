import CountersignCore
import CountersignKit

/// What the reference app shows for a `CountersignError`: a title and an explanation a person
/// understands, and what they can do next. Every case of the error has its own message; the
/// switch below has no `default`, so a new case cannot be added to the SDK without one here.
///
/// ```swift
/// } catch let error as CountersignError {
///     let problem = ProblemMessage(error)
///     show(problem.title, problem.explanation, button: problem.nextStep.buttonTitle)
/// }
/// ```
public struct ProblemMessage: Error, Sendable, Equatable {
    /// What the user can do about it; the app offers it as the message's button.
    public enum NextStep: Sendable, Equatable {
        /// Nothing to do: the message only informs (a request already answered elsewhere).
        case dismiss
        /// Try the same thing again (now, or once the network is back).
        case tryAgain
        /// Scan the QR code again, or paste the link again.
        case scanAgain
        /// Ask whoever gave the enrollment code (the help desk, the account page) for a new one.
        case askForNewCode
        /// Enroll this phone again: its enrollment is gone.
        case enrollAgain
        /// Set up the named factors first (a PIN, Face ID or Touch ID).
        case setUpFactors([Factor])
        /// Enter the PIN again.
        case enterPINAgain
        /// Nothing the user can fix: tell the administrator what the message says.
        case contactAdministrator

        /// The label of the message's button.
        public var buttonTitle: String {
            switch self {
            case .dismiss: "OK"
            case .tryAgain: "Try Again"
            case .scanAgain: "Scan Again"
            case .askForNewCode: "OK"
            case .enrollAgain: "Enroll Again"
            case .setUpFactors: "Set Up"
            case .enterPINAgain: "Enter PIN"
            case .contactAdministrator: "OK"
            }
        }
    }

    public let title: String
    public let explanation: String
    public let nextStep: NextStep

    public init(title: String, explanation: String, nextStep: NextStep) {
        self.title = title
        self.explanation = explanation
        self.nextStep = nextStep
    }

    public init(_ error: CountersignError) {
        switch error {
        case .notEnrolled:
            self.init(title: "Account not on this phone",
                      explanation: "This account is no longer set up on this phone.",
                      nextStep: .enrollAgain)
        case .deviceDeregistered:
            self.init(title: "Phone removed from your account",
                      explanation: "This phone was removed from your account, by you or an administrator. It can no longer approve sign-ins for it.",
                      nextStep: .enrollAgain)
        case .userDeregistered:
            self.init(title: "Too many wrong PINs",
                      explanation: "The PIN was entered wrongly too many times, so this phone was removed from your account to protect it.",
                      nextStep: .enrollAgain)
        case .userDisenrolled:
            self.init(title: "Account removed",
                      explanation: "Your account was removed by an administrator, and with it this phone's approvals.",
                      nextStep: .contactAdministrator)
        case .serverNotReachable:
            self.init(title: "Can't reach the server",
                      explanation: "Your phone is online, but the sign-in server did not answer. It may be down or blocked by this network.",
                      nextStep: .tryAgain)
        case .networkConnectivityFailure:
            self.init(title: "You're offline",
                      explanation: "Connect to Wi-Fi or mobile data, then try again.",
                      nextStep: .tryAgain)
        case .actionCancelled:
            self.init(title: "Cancelled",
                      explanation: "Nothing was approved. If this was a sign-in you started, start it again.",
                      nextStep: .dismiss)
        case .invalidEnrollmentURI:
            self.init(title: "Not an enrollment code",
                      explanation: "This QR code or link is not one for setting up this app. Use the code shown on your account page or sent by your help desk.",
                      nextStep: .scanAgain)
        case .invalidDeviceName:
            self.init(title: "Choose another name",
                      explanation: "The phone's name must be 1 to \(DeviceName.maximumLength) characters, without special control characters.",
                      nextStep: .dismiss)
        case .invalidRequest(let why):
            self.init(title: "Couldn't do that", explanation: "The app asked for something invalid (\(why)).",
                      nextStep: .contactAdministrator)
        case .enrollmentRejected(let code, _):
            self = Self.enrollmentRefused(code)
        case .serverKeyMismatch:
            self.init(title: "Server not trusted",
                      explanation: "The server did not prove it is the one the enrollment code names. Nothing was set up. Someone may be impersonating it: tell your administrator.",
                      nextStep: .contactAdministrator)
        case .invalidServerResponse:
            self.init(title: "Unexpected answer",
                      explanation: "The server answered something this app does not understand. The app or the server may need an update.",
                      nextStep: .contactAdministrator)
        case .server(let status, let code, _):
            self = Self.serverRefused(status: status, code: code)
        case .keyStore:
            self.init(title: "Keys unavailable",
                      explanation: "This phone's secure storage could not be read. Unlock the phone and try again; if it keeps failing, enroll again.",
                      nextStep: .tryAgain)
        case .invalidRequestDetails:
            self.init(title: "Request can't be trusted",
                      explanation: "The request's details could not be verified, so they are not shown and nothing can be approved. Tell your administrator.",
                      nextStep: .contactAdministrator)
        case .expired:
            self.init(title: "Request expired",
                      explanation: "This request waited too long. If you are signing in, start again.",
                      nextStep: .dismiss)
        case .alreadyAnswered:
            self.init(title: "Already answered",
                      explanation: "This request was already approved or denied, here or on another device.",
                      nextStep: .dismiss)
        case .requestNotFound:
            self.init(title: "Request not found",
                      explanation: "The server has no such request for this phone. It may have been withdrawn.",
                      nextStep: .dismiss)
        case .requestNotHandleable:
            self.init(title: "Can't approve here",
                      explanation: "This request needs a way of approving that this phone does not offer.",
                      nextStep: .contactAdministrator)
        case .factorsNotEnrolled(let factors):
            self.init(title: "Set up \(Self.list(factors)) first",
                      explanation: "This request needs \(Self.list(factors)), which this phone has not set up for this account.",
                      nextStep: .setUpFactors(factors))
        case .verifierUnavailable:
            self.init(title: "Try again",
                      explanation: "The check your organisation adds could not run just now. Nothing was decided.",
                      nextStep: .tryAgain)
        case .wrongPIN(let remaining):
            self.init(title: "Wrong PIN",
                      explanation: remaining.map { "\($0) attempt\($0 == 1 ? "" : "s") left before this phone is removed from your account." }
                          ?? "The PIN was not right.",
                      nextStep: .enterPINAgain)
        case .biometricFailed:
            self.init(title: "Not recognised",
                      explanation: "Face ID or Touch ID did not recognise you. Nothing was approved.",
                      nextStep: .tryAgain)
        case .pinNotEnrolled:
            self.init(title: "No PIN set up",
                      explanation: "This request needs a PIN, and none is set up for this account on this phone.",
                      nextStep: .setUpFactors([.pin]))
        case .totpNotEnrolled:
            self.init(title: "No codes for this account",
                      explanation: "This account was set up without one-time codes. Approve requests with notifications instead.",
                      nextStep: .dismiss)
        case .noticeNotFound:
            self.init(title: "Notice not found",
                      explanation: "The server has no such notice for this phone.",
                      nextStep: .dismiss)
        case .noticeAlreadyReported:
            self.init(title: "Already reported",
                      explanation: "This change was already reported as not yours, here or on another device, and undone.",
                      nextStep: .dismiss)
        case .noticeExpired:
            self.init(title: "Too late to answer here",
                      explanation: "This notice is more than a week old. If the change was not yours, tell your administrator.",
                      nextStep: .contactAdministrator)
        case .handoverPending:
            self.init(title: "Waiting for your other phone",
                      explanation: "Approve this phone on the phone you moved from, by picking the number shown here.",
                      nextStep: .dismiss)
        case .handoverNotFound:
            self.init(title: "Move not found",
                      explanation: "This phone started no such move to a new phone.",
                      nextStep: .dismiss)
        case .handoverClosed:
            self.init(title: "Nothing to approve",
                      explanation: "No new phone is waiting for this move, or it was approved or refused already.",
                      nextStep: .dismiss)
        case .handoverExpired:
            self.init(title: "Move timed out",
                      explanation: "The ten minutes to set up the new phone ran out. Start again.",
                      nextStep: .tryAgain)
        case .wrongNumber:
            self.init(title: "Wrong number",
                      explanation: "That is not the number the new phone shows, so it was not added. Start again if it is yours.",
                      nextStep: .tryAgain)
        }
    }

    /// A refused enrollment, by the protocol's error code.
    private static func enrollmentRefused(_ code: String) -> ProblemMessage {
        switch DeviceErrorCode(rawValue: code) {
        case .ticketExpired:
            ProblemMessage(title: "Code expired", explanation: "This enrollment code has expired.", nextStep: .askForNewCode)
        case .ticketUsed:
            ProblemMessage(title: "Code already used",
                           explanation: "This enrollment code was already used, on this phone or another. If that was not you, tell your administrator.",
                           nextStep: .askForNewCode)
        case .ticketRevoked:
            ProblemMessage(title: "Code withdrawn", explanation: "This enrollment code was withdrawn.", nextStep: .askForNewCode)
        case .invalidTicket:
            ProblemMessage(title: "Code not recognised", explanation: "The server does not know this enrollment code.", nextStep: .askForNewCode)
        case .userNotActive:
            ProblemMessage(title: "Account not active",
                           explanation: "Your account is disabled, so this phone cannot be added to it.",
                           nextStep: .contactAdministrator)
        default:
            ProblemMessage(title: "Enrollment refused", explanation: "The server refused to set up this phone (\(code)).",
                           nextStep: .contactAdministrator)
        }
    }

    /// Any other refusal, by status and code.
    private static func serverRefused(status: Int, code: String) -> ProblemMessage {
        switch (status, DeviceErrorCode(rawValue: code)) {
        case (_, .temporarilyUnavailable), (503, _):
            ProblemMessage(title: "Server busy", explanation: "The server is busy or being updated.", nextStep: .tryAgain)
        case (_, .requestExpired), (_, .replayedRequest):
            ProblemMessage(title: "Check the phone's clock",
                           explanation: "The server refused the phone's signature as too old. Set the date and time to automatic, then try again.",
                           nextStep: .tryAgain)
        case (500..., _):
            ProblemMessage(title: "Server error", explanation: "The server failed (\(code)). Try again in a moment.", nextStep: .tryAgain)
        default:
            ProblemMessage(title: "Refused", explanation: "The server refused this (\(code)).", nextStep: .contactAdministrator)
        }
    }

    private static func list(_ factors: [Factor]) -> String {
        let names = factors.map { AuthenticatorOption(factor: $0).title }
        switch names.count {
        case 0: return "another way of approving"
        case 1: return names[0]
        default: return names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
        }
    }
}
