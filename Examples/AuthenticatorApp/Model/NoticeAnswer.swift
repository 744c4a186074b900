import CountersignKit
import Foundation

/// What the app says after "Not me" on a security notice: what the server undid, or why it
/// could not.
///
/// ```swift
/// let answer = await NoticeAnswer.reportNotMe(notice, with: authenticator)
/// show(answer.title, answer.body)
/// ```
public struct NoticeAnswer: Sendable, Equatable {
    public let title: String
    public let body: String

    public init(title: String, body: String) {
        self.title = title
        self.body = body
    }

    /// The text for a report the server accepted.
    public init(_ report: NotMeReport) {
        let undone = switch report.removed {
        case .device?: "The device was removed from your account."
        case .passkey?: "The passkey was removed from your account."
        case .recoveryCodes?: "Your recovery codes were revoked; make new ones on your account page."
        case .accessPass?: "The temporary access pass was revoked."
        case .other?, nil: "The change was undone."
        }
        let signedOut = report.sessionsEnded > 0 ? " You were signed out of every browser." : ""
        let paused = report.requestsSuppressedUntil != nil ? " New sign-in requests are paused for a while." : ""
        self.init(title: "Reported", body: undone + signedOut + paused)
    }

    /// Reports the notice and says how it went.
    public static func reportNotMe(_ notice: SecurityNotice, with authenticator: CountersignAuthenticator) async -> NoticeAnswer {
        do throws(CountersignError) {
            return NoticeAnswer(try await authenticator.reportNotMe(notice))
        } catch {
            let problem = ProblemMessage(error)
            return NoticeAnswer(title: problem.title, body: problem.explanation)
        }
    }
}
