import ArgumentParser
import CountersignCore
import CountersignKit

/// `countersign device push-token set|clear`: the push channel the server reaches an enrollment
/// on. The terminal receives no pushes itself; registering a phone's token (or a made-up one)
/// lets an operator watch the server's side of push delivery from a terminal.
extension DeviceCommand {
    struct PushToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "push-token", abstract: "Register or remove the push token of an enrollment.",
            discussion: """
                The server then sends each new request for the enrollment to APNs or FCM with the tenant's \
                credentials (`countersign admin push`), and `countersign admin push deliveries txn_…` shows how \
                it fared. This terminal receives no pushes: use a token of a phone or an emulator to see them.
                """,
            subcommands: [Register.self, Clear.self])

        struct Register: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "set", abstract: "Register a push token, replacing any earlier one.")
            @OptionGroup var options: StoreOptions
            @Argument(help: "The enrollment, as `countersign device list` shows it.") var enrollmentID: String
            @Option(help: "apns or fcm.") var provider: PushProvider
            @Option(help: "The token: an APNs device token in hex, or an FCM registration token.") var token: String

            func run() async throws {
                let description = try await options.authenticator().updatePushToken(
                    enrollmentID, to: PushRegistration(provider: provider.provider, token: token))
                print(PushProvider.shown(description.push))
            }
        }

        struct Clear: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Remove the push token: the server then sends this enrollment no pushes.")
            @OptionGroup var options: StoreOptions
            @Argument(help: "The enrollment, as `countersign device list` shows it.") var enrollmentID: String

            func run() async throws {
                print(PushProvider.shown(try await options.authenticator().updatePushToken(enrollmentID, to: nil).push))
            }
        }
    }
}

/// A push provider as the command line names it.
enum PushProvider: String, ExpressibleByArgument, CaseIterable {
    case apns, fcm

    var provider: PushRegistration.Provider {
        switch self {
        case .apns: .apns
        case .fcm: .fcm
        }
    }

    /// The push channel as the server now holds it.
    static func shown(_ push: DeviceDescription.PushStatus?) -> String {
        guard let push else { return "No push token registered." }
        let state = push.valid ? "valid" : "invalid: \(push.error ?? "refused by the provider")"
        return "Push token registered: \(push.provider.rawValue), ending \(push.tokenSuffix) (\(state))."
    }
}
