import CountersignCore
import CountersignKit
import Foundation

/// Registers the phone's APNs device token with every account, again whenever the system hands
/// the app a new one (it may at any launch), and only where it changed: what each account was
/// last given is kept in a small file.
///
/// ```swift
/// func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken token: Data) {
///     Task { await registrar.register(deviceToken: token) }
/// }
/// ```
public actor PushTokens {
    private let authenticator: CountersignAuthenticator
    private let file: URL

    /// `file` keeps, per enrollment, the token it was last given.
    public init(authenticator: CountersignAuthenticator, file: URL) {
        self.authenticator = authenticator
        self.file = file
    }

    /// The token as APNs expects it: lowercase hex.
    public static func hex(_ deviceToken: Data) -> String {
        deviceToken.map { String(format: "%02x", $0) }.joined()
    }

    /// Gives `deviceToken` to each account that does not have it yet; returns the problems met,
    /// by enrollment (an account that failed is tried again next time).
    @discardableResult
    public func register(deviceToken: Data) async -> [Enrollment.ID: ProblemMessage] {
        let token = Self.hex(deviceToken)
        var given = (try? JSONDecoder().decode([String: String].self, from: Data(contentsOf: file))) ?? [:]
        var problems: [Enrollment.ID: ProblemMessage] = [:]
        let enrollments: [Enrollment]
        do throws(CountersignError) { enrollments = try await authenticator.enrollments() } catch {
            return ["": ProblemMessage(error)]
        }
        for enrollment in enrollments where given[enrollment.id] != token {
            do throws(CountersignError) {
                _ = try await authenticator.updatePushToken(enrollment.id, to: PushRegistration(provider: .apns, token: token))
                given[enrollment.id] = token
            } catch {
                problems[enrollment.id] = ProblemMessage(error)
            }
        }
        // Accounts removed meanwhile are forgotten.
        given = given.filter { entry in enrollments.contains { $0.id == entry.key } }
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? JSONEncoder().encode(given).write(to: file, options: .atomic)
        return problems
    }
}
