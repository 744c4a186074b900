import CountersignCore
import CountersignKit
import Foundation

/// Moving to a new phone, on the old one: show the QR code, then the new phone's name and three
/// numbers, then how it ended. Each step is a `HandoverScreen.Stage`.
///
/// ```swift
/// var screen = try await HandoverScreen.start(enrollment.id, retire: false, with: authenticator).get()
/// screen = await screen.refreshed(with: authenticator)      // every two seconds while .showCode
/// screen = await screen.picked("47", with: authenticator)   // the number the new phone shows
/// ```
public struct HandoverScreen: Sendable, Equatable {
    public enum Stage: Sendable, Equatable {
        /// Scan this with the new phone (the URI is the QR code's text).
        case showCode(uri: String)
        /// Pick the number the new phone shows.
        case pickNumber(deviceName: String, choices: [String])
        /// Ended: approved, refused, expired, or a problem; the text says which.
        case done(title: String, message: String, added: Bool)
    }

    public let handoverID: String
    public let enrollmentID: Enrollment.ID
    public let stage: Stage
    /// The URI, kept while no phone has scanned it.
    let uri: String?

    init(_ state: HandoverState, enrollmentID: Enrollment.ID, uri: String?) {
        handoverID = state.id
        self.enrollmentID = enrollmentID
        self.uri = uri
        switch state.status {
        case .waiting:
            stage = .showCode(uri: uri ?? "")
        case .awaitingApproval:
            stage = .pickNumber(deviceName: state.newDevice?.name ?? "The new phone", choices: state.choices ?? [])
        case .approved:
            let name = state.newDevice?.name ?? "The new phone"
            stage = .done(title: "\(name) added",
                          message: state.retire ? "It approves sign-ins now, and this phone no longer does." : "It approves sign-ins now.",
                          added: true)
        case .denied:
            stage = .done(title: "Not added", message: "The new phone was refused and removed.", added: false)
        case .expired:
            stage = .done(title: "Move timed out", message: "The ten minutes ran out. Start again.", added: false)
        }
    }

    private init(ending problem: ProblemMessage, from screen: HandoverScreen) {
        handoverID = screen.handoverID
        enrollmentID = screen.enrollmentID
        uri = screen.uri
        stage = .done(title: problem.title, message: problem.explanation, added: false)
    }

    /// Starts a move from this phone's enrollment; with `retire`, this phone stops approving for
    /// the account once the new one is approved.
    public static func start(
        _ enrollmentID: Enrollment.ID, retire: Bool, with authenticator: CountersignAuthenticator
    ) async -> Result<HandoverScreen, ProblemMessage> {
        do throws(CountersignError) {
            let state = try await authenticator.startHandover(enrollmentID, retireThisDevice: retire)
            return .success(HandoverScreen(state, enrollmentID: enrollmentID, uri: state.enrollmentURI))
        } catch {
            return .failure(ProblemMessage(error))
        }
    }

    /// The screen as the server now sees the move.
    public func refreshed(with authenticator: CountersignAuthenticator) async -> HandoverScreen {
        do throws(CountersignError) {
            return HandoverScreen(try await authenticator.handover(handoverID, of: enrollmentID), enrollmentID: enrollmentID, uri: uri)
        } catch {
            return HandoverScreen(ending: ProblemMessage(error), from: self)
        }
    }

    /// The user picked `number`: approved, or (a wrong one) refused.
    public func picked(_ number: String, with authenticator: CountersignAuthenticator) async -> HandoverScreen {
        do throws(CountersignError) {
            let state = try await authenticator.approveHandover(handoverID, number: number, of: enrollmentID)
            return HandoverScreen(state, enrollmentID: enrollmentID, uri: uri)
        } catch {
            return HandoverScreen(ending: ProblemMessage(error), from: self)
        }
    }

    /// The user cancelled: the code stops working and a phone that scanned it is removed.
    public func cancelled(with authenticator: CountersignAuthenticator) async -> HandoverScreen {
        do throws(CountersignError) {
            return HandoverScreen(try await authenticator.denyHandover(handoverID, of: enrollmentID), enrollmentID: enrollmentID, uri: uri)
        } catch {
            return HandoverScreen(ending: ProblemMessage(error), from: self)
        }
    }

    /// On the new phone: what to show while the old one has not approved it.
    public static func waitingText(_ handover: EnrollmentHandover) -> String {
        "On your other phone, pick \(handover.number) to finish adding this one."
    }
}
