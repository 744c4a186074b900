import ArgumentParser
import CountersignCore
import CountersignKit
import Foundation

extension DeviceCommand {
    /// `countersign device handover`: moving to a new device without an administrator.
    struct Handover: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Hand over to a new device of the same user, approved here with the number it shows.",
            discussion: """
                On this device: `handover start` prints an enrollment URI, valid ten minutes and once. On the new \
                device: `countersign device enroll <uri>` prints a two-digit number, and the enrollment waits. Here \
                again: `handover status <hov_…>` shows the new device and three numbers, and `handover approve \
                <hov_…> <number>` approves it with the one the new device shows (a wrong one refuses it and removes \
                the new device); `handover deny` refuses. On the new device, `handover check <enrollment>` says \
                whether it was approved. With --retire, this enrollment is removed once the new device is approved.
                """,
            subcommands: [Start.self, Status.self, Approve.self, Deny.self, Check.self])

        struct Start: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Start a handover: print the URI the new device enrolls with.")
            @OptionGroup var options: DeviceCommand.StoreOptions
            @Argument(help: "The enrollment to hand over (default: the only one here).") var enrollmentID: String?
            @Flag(help: "Remove this enrollment once the new device is approved.") var retire = false

            func run() async throws {
                let authenticator = options.authenticator()
                let enrollment = try await DeviceCommand.Handover.enrollment(enrollmentID, in: authenticator)
                let handover = try await authenticator.startHandover(enrollment, retireThisDevice: retire)
                print(handover.enrollmentURI ?? "")
                print("handover \(handover.id), valid until \(Timestamps.format(handover.expiresAt))")
                print("On the new device: countersign device enroll '<the URI above>'. Then here: "
                    + "countersign device handover approve \(handover.id) <the number it shows>")
                if retire { print("This enrollment is removed once the new device is approved.") }
            }
        }

        struct Status: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show a handover: the new device, and the numbers to pick from.")
            @OptionGroup var options: DeviceCommand.StoreOptions
            @Argument(help: "The handover (hov_…).") var handoverID: String

            func run() async throws {
                let authenticator = options.authenticator()
                let (_, state) = try await DeviceCommand.Handover.find(handoverID, in: authenticator)
                DeviceCommand.Handover.show(state)
            }
        }

        struct Approve: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Approve the new device with the number it shows.")
            @OptionGroup var options: DeviceCommand.StoreOptions
            @Argument(help: "The handover (hov_…).") var handoverID: String
            @Argument(help: "The two digits the new device shows.") var number: String

            func run() async throws {
                let authenticator = options.authenticator()
                let (enrollment, _) = try await DeviceCommand.Handover.find(handoverID, in: authenticator)
                let state = try await authenticator.approveHandover(handoverID, number: number, of: enrollment)
                DeviceCommand.Handover.show(state)
                if state.retire { print("This enrollment (\(enrollment)) was removed.") }
            }
        }

        struct Deny: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Refuse the handover: the URI is void and the new device removed.")
            @OptionGroup var options: DeviceCommand.StoreOptions
            @Argument(help: "The handover (hov_…).") var handoverID: String

            func run() async throws {
                let authenticator = options.authenticator()
                let (enrollment, _) = try await DeviceCommand.Handover.find(handoverID, in: authenticator)
                DeviceCommand.Handover.show(try await authenticator.denyHandover(handoverID, of: enrollment))
            }
        }

        struct Check: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "On the new device: whether the device that handed over has approved this enrollment.")
            @OptionGroup var options: DeviceCommand.StoreOptions
            @Argument(help: "The enrollment made with the handover URI.") var enrollmentID: String

            func run() async throws {
                let authenticator = options.authenticator()
                let waiting = try await authenticator.enrollments().first { $0.id == enrollmentID }?.handover
                if try await authenticator.checkHandover(enrollmentID) {
                    print("Approved: this enrollment works.")
                } else {
                    print("Waiting for approval on \(waiting?.vouchedBy ?? "the other device"): pick \(waiting?.number ?? "?") there.")
                    throw ExitCode(2)
                }
            }
        }

        /// The enrollment named, or the only one here.
        static func enrollment(_ id: String?, in authenticator: CountersignAuthenticator) async throws -> String {
            if let id { return id }
            let all = try await authenticator.enrollments()
            guard all.count == 1, let only = all.first else {
                throw ValidationError(all.isEmpty ? "this device has no enrollment" : "name the enrollment to hand over: this device has \(all.count)")
            }
            return only.id
        }

        /// The enrollment here that started the handover, and its state.
        static func find(_ handoverID: String, in authenticator: CountersignAuthenticator) async throws
            -> (enrollment: String, state: HandoverState) {
            for enrollment in try await authenticator.enrollments() {
                do {
                    return (enrollment.id, try await authenticator.handover(handoverID, of: enrollment.id))
                } catch CountersignError.handoverNotFound {
                    continue
                }
            }
            throw CountersignError.handoverNotFound
        }

        static func show(_ state: HandoverState) {
            print("\(state.id): \(state.status.rawValue.replacingOccurrences(of: "_", with: " "))")
            if let device = state.newDevice {
                print("  new device  \(device.deviceID) \"\(device.name)\" (\(device.platform.rawValue))")
            }
            if let choices = state.choices {
                print("  pick the number the new device shows: \(choices.joined(separator: "  "))")
            }
            print("  until       \(Timestamps.format(state.expiresAt))")
        }
    }
}
