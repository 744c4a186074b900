import CountersignKit
import Foundation

/// The accounts screen: one row per enrollment (several accounts, on several servers), and
/// renaming and removing this phone from one.
public struct AccountList: Sendable, Equatable {
    public struct Row: Sendable, Equatable, Identifiable {
        public let id: Enrollment.ID
        public let title: String
        public let subtitle: String

        public init(id: Enrollment.ID, title: String, subtitle: String) {
            self.id = id
            self.title = title
            self.subtitle = subtitle
        }
    }

    public let rows: [Row]

    public init(_ enrollments: [Enrollment]) {
        rows = enrollments
            .sorted { ($0.user.username, $0.server.absoluteString) < ($1.user.username, $1.server.absoluteString) }
            .map { Row(id: $0.id, title: $0.user.username, subtitle: "\($0.server.host ?? $0.server.absoluteString) · \($0.deviceName)") }
    }

    /// The accounts on this phone, or why they cannot be read.
    public static func load(_ authenticator: CountersignAuthenticator) async -> Result<AccountList, ProblemMessage> {
        do throws(CountersignError) { return .success(AccountList(try await authenticator.enrollments())) } catch {
            return .failure(ProblemMessage(error))
        }
    }

    /// Renames this phone as the server and its other screens show it.
    public static func rename(
        _ enrollmentID: Enrollment.ID, to name: String, with authenticator: CountersignAuthenticator
    ) async -> ProblemMessage? {
        do throws(CountersignError) { _ = try await authenticator.rename(enrollmentID, to: name); return nil } catch { return ProblemMessage(error) }
    }

    /// Removes this phone from the account, here and at the server.
    public static func remove(_ enrollmentID: Enrollment.ID, with authenticator: CountersignAuthenticator) async -> ProblemMessage? {
        do throws(CountersignError) { try await authenticator.unenroll(enrollmentID); return nil } catch { return ProblemMessage(error) }
    }
}
