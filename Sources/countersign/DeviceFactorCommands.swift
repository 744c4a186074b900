import ArgumentParser
import CountersignCore
import CountersignKit
import Foundation

/// `countersign device pin change` and `countersign device totp`: the factors an enrollment
/// keeps beside its device key.
extension DeviceCommand {
    struct PIN: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pin", abstract: "Manage an enrollment's PIN.", subcommands: [Change.self])

        struct Change: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Replace the PIN of an enrollment.",
                discussion: """
                    Asks for the current PIN, then the new one twice, without echo. Scripts set \\
                    COUNTERSIGN_DEVICE_PIN and COUNTERSIGN_DEVICE_NEW_PIN, or pass --pin-stdin and write the \\
                    current and the new PIN on two lines. A wrong current PIN counts against the limit after \\
                    which the server removes the enrollment.
                    """)
            @OptionGroup var options: StoreOptions
            @Argument var enrollmentID: String
            @Flag(name: .customLong("pin-stdin"), help: "Read both PINs from standard input instead of asking.")
            var pinStdin = false

            func run() async throws {
                let pins = PINSource(fromStandardInput: pinStdin)
                let current = pins.current(prompt: "Current PIN: ")
                let new = try pins.new(PINSource.newPINEnvironmentVariable)
                do {
                    _ = try await options.authenticator().changePIN(enrollmentID, from: current, to: new)
                } catch {
                    throw Self.explained(error)
                }
                print("PIN changed.")
            }

            /// A wrong PIN, told with what is at stake.
            static func explained(_ error: CountersignError) -> any Error {
                guard case .wrongPIN(let remaining) = error else { return error }
                let left = remaining.map { "; \($0) attempt\($0 == 1 ? "" : "s") left before the enrollment is removed" }
                return TerminalFailure("wrong PIN" + (left ?? "") + "; nothing was changed")
            }
        }
    }

    struct OneTimeCode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "totp", abstract: "Print an enrollment's current one-time code.",
            discussion: "The code alone goes to standard output, how long it stays valid to standard error.")
        @OptionGroup var options: StoreOptions
        @Argument var enrollmentID: String

        func run() async throws {
            let current = try await options.authenticator().oneTimeCode(enrollmentID)
            print(current.code)
            let seconds = max(0, Int(current.validUntil.timeIntervalSinceNow.rounded(.up)))
            FileHandle.standardError.write(Data("valid for \(seconds)s more\n".utf8))
        }
    }
}
