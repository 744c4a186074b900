import CountersignKit
import Foundation

/// A one-time code as the fallback screen shows it, for when the phone cannot receive a push:
/// the digits in two groups, and how long they stay valid.
public struct OneTimeCodeDisplay: Sendable, Equatable {
    public let code: String
    public let secondsLeft: Int
    /// The share of the code's period still left, for the ring around it (1 = fresh).
    public let remaining: Double

    public init(_ code: OneTimeCode, at now: Date) {
        let half = code.code.count / 2
        self.code = String(code.code.prefix(half)) + " " + String(code.code.dropFirst(half))
        secondsLeft = max(0, Int(code.validUntil.timeIntervalSince(now).rounded(.up)))
        let period = code.validUntil.timeIntervalSince(code.validFrom)
        remaining = period > 0 ? max(0, min(1, code.validUntil.timeIntervalSince(now) / period)) : 0
    }

    /// The current code of an enrollment, or why there is none.
    public static func current(
        for enrollmentID: Enrollment.ID, with authenticator: CountersignAuthenticator, at now: Date = Date()
    ) async -> Result<OneTimeCodeDisplay, ProblemMessage> {
        do throws(CountersignError) { return .success(OneTimeCodeDisplay(try await authenticator.oneTimeCode(enrollmentID, at: now), at: now)) } catch {
            return .failure(ProblemMessage(error))
        }
    }
}
