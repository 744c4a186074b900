import ArgumentParser
import CountersignCore
import CountersignKit
import Foundation

extension DeviceCommand {
    /// `countersign device notices`: what was done to the account, as the server tells this
    /// device (a device or passkey added, a recovery code or pass used).
    struct Notices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List what was done to the account: devices and passkeys added, recovery codes and passes used.",
            discussion: """
                Each notice is shown to the user's other devices for a week. If one was not you, answer \
                `countersign device not-me <notice>`: the device or passkey is removed (or the codes or pass \
                revoked), your browser sessions end and new requests pause.
                """)
        @OptionGroup var options: DeviceCommand.StoreOptions
        @Argument(help: "An enrollment (default: every enrollment here).") var enrollmentID: String?

        func run() async throws {
            let notices = try await options.authenticator().notices(enrollmentID)
            if notices.isEmpty {
                print("No notices.")
                return
            }
            for notice in notices {
                var facts = ["made \(Timestamps.format(notice.createdAt))"]
                if let address = notice.ipAddress { facts.append("from \(address)") }
                facts.append(notice.reportedAt.map { "reported not me \(Timestamps.format($0))" }
                    ?? "answerable until \(Timestamps.format(notice.expiresAt))")
                print("""
                    \(notice.id)  \(notice.summary)
                      \(facts.joined(separator: ", "))
                      enrollment \(notice.enrollmentID), about \(notice.subjectID)
                    """)
            }
        }
    }

    /// `countersign device not-me <notice>`.
    struct NotMe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "not-me",
            abstract: "Report a notice as not yours: undo it, end your browser sessions and pause requests.")
        @OptionGroup var options: DeviceCommand.StoreOptions
        @Argument(help: "The notice (ntc_…), from `countersign device notices`.") var noticeID: String

        func run() async throws {
            let authenticator = options.authenticator()
            guard let notice = try await authenticator.notices().first(where: { $0.id == noticeID }) else {
                throw CountersignError.noticeNotFound
            }
            let report = try await authenticator.reportNotMe(notice)
            print("Reported \(notice.id) as not you.")
            switch report.removed {
            case .device?: print("The device \(notice.subjectName.map { "\"\($0)\" " } ?? "")(\(notice.subjectID)) was removed.")
            case .passkey?: print("The passkey \(notice.subjectName.map { "\"\($0)\" " } ?? "")was removed.")
            case .recoveryCodes?: print("Your recovery codes were revoked.")
            case .accessPass?: print("The temporary access pass was revoked.")
            case .other(let name)?: print("Removed: \(name).")
            case nil: print("It was gone already.")
            }
            print("Browser sessions ended: \(report.sessionsEnded).")
            if let until = report.requestsSuppressedUntil {
                print("New requests are refused until \(Timestamps.format(until)).")
            }
        }
    }
}
