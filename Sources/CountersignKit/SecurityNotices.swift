import CountersignCore
import Foundation

/// Something done to the user's account that their other devices are told of, for a week: a
/// device or a passkey added, a recovery code or a temporary access pass used. The user answers
/// "not me" (`CountersignAuthenticator.reportNotMe(_:)`) when it was not them; the server then
/// undoes it and closes the account to whoever did it (docs/recovery.md).
public struct SecurityNotice: Sendable, Equatable, Identifiable {
    public enum Kind: Sendable, Equatable {
        case deviceAdded
        case passkeyAdded
        case recoveryCodeUsed
        case accessPassUsed
        /// A kind this SDK does not know, by the server's name for it.
        case other(String)

        init(_ name: String) {
            switch name {
            case "device_added": self = .deviceAdded
            case "passkey_added": self = .passkeyAdded
            case "recovery_code_used": self = .recoveryCodeUsed
            case "access_pass_used": self = .accessPassUsed
            default: self = .other(name)
            }
        }
    }

    /// `ntc_…`.
    public let id: String
    /// The enrollment the notice was shown to.
    public let enrollmentID: Enrollment.ID
    public let kind: Kind
    /// The device, passkey, code or pass the notice is about.
    public let subjectID: String
    /// The name of the device or passkey added, as its owner gave it.
    public let subjectName: String?
    /// The address the change came from, when the server saw one.
    public let ipAddress: String?
    public let createdAt: Date
    /// Until when "not me" may be answered.
    public let expiresAt: Date
    /// When it was answered "not me", on this device or another.
    public let reportedAt: Date?

    /// One sentence for the user, in English: what was done to the account.
    public var summary: String {
        let named = subjectName.map { ", “\($0)”," } ?? ""
        return switch kind {
        case .deviceAdded: "A new device\(named) was added to your account."
        case .passkeyAdded: "A new passkey\(named) was added to your account."
        case .recoveryCodeUsed: "A recovery code was used to sign in to your account."
        case .accessPassUsed: "A temporary access pass was used to sign in to your account."
        case .other: "Your account was changed."
        }
    }
}

extension SecurityNotice {
    /// The notice as the server sent it, shown to `enrollmentID`.
    init(_ item: SecurityNoticeList.Item, enrollmentID: Enrollment.ID) {
        self.init(
            id: item.id, enrollmentID: enrollmentID, kind: Kind(item.kind), subjectID: item.subjectID,
            subjectName: item.subjectName, ipAddress: item.ipAddress, createdAt: item.createdAt, expiresAt: item.expiresAt,
            reportedAt: item.reportedAt)
    }
}

/// What a "not me" undid (`CountersignAuthenticator.reportNotMe(_:)`).
public struct NotMeReport: Sendable, Equatable {
    public enum Removed: Sendable, Equatable {
        case device, passkey, recoveryCodes, accessPass
        case other(String)
    }

    public let noticeID: String
    public let reportedAt: Date
    /// What was removed or revoked; nil when it was gone already.
    public let removed: Removed?
    /// The user's browser sessions that were ended.
    public let sessionsEnded: Int
    /// Until when new requests to the user are refused, if the tenant pauses them.
    public let requestsSuppressedUntil: Date?
}

/// Security notices: what was done to the account, shown to the user's other devices, and the
/// "not me" that undoes it.
extension CountersignAuthenticator {
    /// The notices shown to one enrollment, or to every enrollment when `enrollmentID` is nil,
    /// newest first: those made since the enrollment, not about itself, for a week. When listing
    /// every enrollment, one the server has deregistered is removed from the device and left out.
    ///
    /// ```swift
    /// for notice in try await authenticator.notices() where notice.reportedAt == nil {
    ///     print(notice.summary)
    /// }
    /// ```
    public func notices(_ enrollmentID: Enrollment.ID? = nil) async throws(CountersignError) -> [SecurityNotice] {
        var notices: [SecurityNotice] = []
        if let enrollmentID {
            notices = try await noticeList(of: enrollmentID)
        } else {
            for enrollment in try await keyStore.enrollments() {
                do throws(CountersignError) {
                    notices += try await noticeList(of: enrollment.id)
                } catch where error.removesEnrollment {
                    continue
                }
            }
        }
        return notices.sorted { $0.createdAt > $1.createdAt }
    }

    /// Answers "not me": the server removes the device or passkey, or revokes the recovery codes
    /// or the pass, ends the user's browser sessions and pauses new requests. Throws
    /// `.noticeAlreadyReported` when it was answered already (here or on another device),
    /// `.noticeExpired` after a week, and `.noticeNotFound` when the server showed no such
    /// notice to this enrollment.
    ///
    /// ```swift
    /// let report = try await authenticator.reportNotMe(notice)
    /// print(report.removed == .device ? "The device was removed." : "Reported.")
    /// ```
    public func reportNotMe(_ notice: SecurityNotice) async throws(CountersignError) -> NotMeReport {
        try await withDevice(notice.enrollmentID) { client throws(CountersignError) in
            guard let url = client.endpoints.notMe(notice.id) else { throw .noticeNotFound }
            let answer: NotMeAnswer
            do throws(CountersignError) {
                answer = try await client.send(.post, url, expecting: NotMeAnswer.self, what: "report")
            } catch {
                guard case .server(_, let code, _) = error else { throw error }
                switch DeviceErrorCode(rawValue: code) {
                case .unknownNotice: throw .noticeNotFound
                case .alreadyReported: throw .noticeAlreadyReported
                case .noticeExpired: throw .noticeExpired
                default: throw error
                }
            }
            guard answer.id == notice.id else {
                throw .invalidServerResponse("the server answered about another notice than the one reported")
            }
            let removed: NotMeReport.Removed? = answer.removed.map { name in
                switch name {
                case "device": .device
                case "passkey": .passkey
                case "recovery_codes": .recoveryCodes
                case "access_pass": .accessPass
                default: .other(name)
                }
            }
            return NotMeReport(noticeID: answer.id, reportedAt: answer.reportedAt, removed: removed,
                               sessionsEnded: answer.sessionsEnded, requestsSuppressedUntil: answer.requestsSuppressedUntil)
        }
    }

    private func noticeList(of enrollmentID: Enrollment.ID) async throws(CountersignError) -> [SecurityNotice] {
        try await withDevice(enrollmentID) { client throws(CountersignError) in
            try await client.send(.get, client.endpoints.notices, expecting: SecurityNoticeList.self, what: "notice list")
                .notices.map { SecurityNotice($0, enrollmentID: enrollmentID) }
        }
    }
}
