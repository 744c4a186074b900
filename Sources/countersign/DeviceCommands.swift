import ArgumentParser
import CountersignCore
import CountersignKit
import Foundation

/// The terminal authenticator: this machine as a Countersign device, its keys in a directory.
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Use this terminal as a Countersign authenticator.",
        subcommands: [
            Enroll.self, List.self, Status.self, Rename.self, Unenroll.self, Pending.self, Approve.self, Deny.self,
            Watch.self,
        ])

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

/// `countersign device pending|approve|deny`: the inbox of every enrollment on this terminal.
extension DeviceCommand {
    struct Pending: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the requests waiting for an answer, with what they ask.")
        @OptionGroup var options: StoreOptions
        @Option(help: "Only this enrollment's requests.") var enrollment: String?

        func run() async throws {
            let authenticator = options.authenticator()
            let requests = try await authenticator.pendingRequests(enrollment)
            if requests.isEmpty {
                print("No pending requests.")
                return
            }
            for (index, request) in requests.enumerated() {
                if index > 0 { print() }
                do {
                    print(RequestSummary(try await authenticator.details(for: request)).text)
                } catch {
                    print("\(request.id)\n  enrollment \(request.enrollmentID)\n  cannot be shown: \(error)")
                }
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Approve a pending request.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The request's id (txn_…), as `countersign device pending` lists it.") var requestID: String

        func run() async throws {
            try await answerPending(requestID, .approve, authenticator: options.authenticator())
        }
    }

    struct Deny: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Deny a pending request.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The request's id (txn_…), as `countersign device pending` lists it.") var requestID: String

        func run() async throws {
            try await answerPending(requestID, .deny, authenticator: options.authenticator())
        }
    }
}

/// Finds a request in the inbox of any enrollment, shows it, and answers it.
private func answerPending(
    _ requestID: String, _ decision: ApprovalResponse.Decision, authenticator: CountersignAuthenticator
) async throws {
    guard let request = try await authenticator.pendingRequests().first(where: { $0.id == requestID }) else {
        throw TerminalFailure("no enrollment on this device has a pending request \(requestID)")
    }
    let details = try await authenticator.details(for: request)
    print(RequestSummary(details).text)
    let acknowledgement = switch decision {
    case .approve: try await authenticator.approve(details)
    case .deny: try await authenticator.deny(details)
    }
    print(RequestSummary.outcome(of: acknowledgement))
}

/// A request as the terminal shows it: enough to decide on, nothing sealed left out. What the
/// relying party or its user agent chose is shown with control and format characters escaped,
/// so that it cannot move the cursor, recolour or reorder the lines the user decides on.
struct RequestSummary {
    let details: RequestDetails

    init(_ details: RequestDetails) {
        self.details = details
    }

    var text: String {
        var lines = [
            Self.shown(details.request.id),
            "  client      \(Self.shown(details.clientName))",
            "  user        \(Self.shown(details.username))",
        ]
        if let message = details.bindingMessage { lines.append("  message     \(Self.shown(message))") }
        lines.append("  scope       \(Self.shown(details.scope.joined(separator: " ")))")
        if let acr = details.transaction.acrValues { lines.append("  acr         \(Self.shown(acr.joined(separator: " ")))") }
        if let address = details.ipAddress { lines.append("  from        \(Self.shown(address))") }
        if let agent = details.userAgent { lines.append("  user agent  \(Self.shown(agent))") }
        lines.append("  expires     \(Timestamps.format(details.expiresAt)) (\(Self.remaining(until: details.expiresAt)))")
        lines.append("  enrollment  \(details.request.enrollmentID)")
        return lines.joined(separator: "\n")
    }

    /// `text` with every control or format character (escape, carriage return, bidirectional
    /// override, …) written as `\u{…}`.
    static func shown(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format: shown += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    static func remaining(until date: Date) -> String {
        let seconds = Int(date.timeIntervalSince(Date()).rounded(.down))
        guard seconds > 0 else { return "expired" }
        return seconds >= 60 ? "in \(seconds / 60)m \(seconds % 60)s" : "in \(seconds)s"
    }

    static func outcome(of acknowledgement: ApprovalAcknowledgement) -> String {
        "\(acknowledgement.requestID): \(acknowledgement.status) at \(Timestamps.format(acknowledgement.decidedAt))"
    }
}

/// A failure of a terminal command, as the text shown for it.
struct TerminalFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
