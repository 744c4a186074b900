import ArgumentParser
import CountersignCommandLine
import CountersignCore
import CountersignKit
import Foundation

/// `countersign device pin change` and `countersign device totp`: the factors an enrollment
/// keeps beside its device key.
extension DeviceCommand {
    struct PIN: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pin", abstract: "Manage an enrollment's PIN.", subcommands: [Set.self, Change.self])

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Add a PIN to an enrollment that has none, without enrolling again.",
                discussion: """
                    Asks for the new PIN twice, without echo. Scripts set COUNTERSIGN_DEVICE_PIN or pass \
                    --pin-stdin. The request is signed by the enrollment's device key.
                    """)
            @OptionGroup var options: StoreOptions
            @Argument var enrollmentID: String
            @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input instead of asking.")
            var pinStdin = false

            func run() async throws {
                let pin = try PINSource(fromStandardInput: pinStdin).new()
                let description = try await options.authenticator().addFactors(enrollmentID, EnrollmentFactors(pin: pin))
                print("PIN added to \(enrollmentID) (factors: \(FactorList(description.factors).text)).")
            }
        }

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

    struct Biometric: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "biometric", abstract: "Manage an enrollment's biometric key.", subcommands: [Add.self])

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Add a biometric key to an enrollment that has none, without enrolling again.",
                discussion: "On a terminal the key is the \(BiometricStandIn.label).")
            @OptionGroup var options: StoreOptions
            @Argument var enrollmentID: String

            func run() async throws {
                let description = try await options.authenticator().addFactors(
                    enrollmentID, EnrollmentFactors(biometric: true))
                print("Biometric key added to \(enrollmentID) (factors: \(FactorList(description.factors).text)).")
            }
        }
    }

    /// "pin, biometric, totp", or "none".
    struct FactorList {
        let text: String

        init(_ factors: DeviceDescription.EnrolledFactors?) {
            guard let factors else { text = "not reported"; return }
            let names = [factors.pin ? "pin" : nil, factors.biometric ? "biometric" : nil, factors.totp ? "totp" : nil]
                .compactMap { $0 }
            text = names.isEmpty ? "none" : names.joined(separator: ", ")
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
