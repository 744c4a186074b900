import ArgumentParser
import CountersignCore
import CountersignKit
import Foundation

/// The terminal authenticator: this machine as a Countersign device, its keys in a directory.
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Use this terminal as a Countersign authenticator.",
        subcommands: [Enroll.self, List.self, Status.self, Rename.self, Unenroll.self])

    struct StoreOptions: ParsableArguments {
        @Option(help: "Where enrollments and keys are kept (COUNTERSIGN_DEVICE_STORE). Default ~/.countersign/device.")
        var store: String?

        func authenticator() -> CountersignAuthenticator {
            let path = setting(store, "COUNTERSIGN_DEVICE_STORE")
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".countersign/device").path
            return CountersignAuthenticator(keyStore: FileKeyStore(root: URL(fileURLWithPath: path)))
        }
    }

    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enroll with a countersign://enroll URI.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The enrollment URI (from `countersign admin enroll`, or the text of the QR code).") var uri: String
        @Option(help: "The device name shown to the user and administrators. Default: this host's name.") var name: String?

        func run() async throws {
            let deviceName = name ?? ProcessInfo.processInfo.hostName
            let enrollment = try await options.authenticator().enroll(uri: uri, deviceName: deviceName, platform: .linux)
            print("Enrolled \(enrollment.deviceName) for \(enrollment.user.username) at \(enrollment.server.absoluteString)")
            print("enrollment \(enrollment.id)  device \(enrollment.deviceID)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List this device's enrollments.")
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let enrollments = try await options.authenticator().enrollments()
            if enrollments.isEmpty {
                print("No enrollments.")
                return
            }
            for enrollment in enrollments {
                print("""
                    \(enrollment.id)
                      user    \(enrollment.user.username)\(enrollment.user.displayName.map { " (\($0))" } ?? "")
                      server  \(enrollment.server.absoluteString) (tenant \(enrollment.tenant))
                      device  \(enrollment.deviceID) "\(enrollment.deviceName)"
                      since   \(Timestamps.format(enrollment.enrolledAt))
                    """)
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an enrollment as the server holds it.")
        @OptionGroup var options: StoreOptions
        @Argument var enrollmentID: String

        func run() async throws {
            let description = try await options.authenticator().deviceStatus(enrollmentID)
            let data = try Timestamps.encoder().encode(description)
            print(prettyJSON(try JSONSerialization.jsonObject(with: data)))
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename this device at the server.")
        @OptionGroup var options: StoreOptions
        @Argument var enrollmentID: String
        @Argument var name: String

        func run() async throws {
            let description = try await options.authenticator().rename(enrollmentID, to: name)
            print("Renamed to \(description.name).")
        }
    }

    struct Unenroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an enrollment at the server and here.")
        @OptionGroup var options: StoreOptions
        @Argument var enrollmentID: String

        func run() async throws {
            try await options.authenticator().unenroll(enrollmentID)
            print("Unenrolled \(enrollmentID).")
        }
    }
}
