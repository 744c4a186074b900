import ArgumentParser
import CountersignCommandLine
import CountersignCore
import CountersignKit
import Foundation

/// The terminal authenticator: this machine as a Countersign device, its keys in a directory.
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Use this terminal as a Countersign authenticator.",
        subcommands: [
            Enroll.self, List.self, Status.self, Rename.self, Unenroll.self, Pending.self, Approve.self, Deny.self,
            Watch.self, PIN.self, Biometric.self, OneTimeCode.self, PushToken.self, Notices.self, NotMe.self, Handover.self,
        ])

    struct StoreOptions: ParsableArguments {
        @Option(help: "Where enrollments and keys are kept (COUNTERSIGN_DEVICE_STORE). Default ~/.countersign/device.")
        var store: String?

        /// The device store's directory.
        var path: String {
            setting(store, "COUNTERSIGN_DEVICE_STORE")
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".countersign/device").path
        }

        /// What the commands answered on this terminal.
        var answerLog: AnswerLog { AnswerLog(store: path) }

        func authenticator(
            transport: any HTTPTransport = URLSessionTransport(), hooks: AuthenticatorHooks = AuthenticatorHooks()
        ) -> CountersignAuthenticator {
            CountersignAuthenticator(
                keyStore: FileKeyStore(root: URL(fileURLWithPath: path)), transport: transport,
                biometricKeys: BiometricStandIn.keys(), hooks: hooks)
        }
    }

    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enroll with a countersign://enroll URI, or by signing in (--sign-in).",
            discussion: """
                With --sign-in, no URI is needed: the command signs you in as a native app (the authorization \
                code flow with PKCE, answered on a loopback port), opening the sign-in page in a browser or \
                printing its URL (--no-browser), and enrolls this terminal with the access token, for the user \
                who signed in. --server names the tenant (its issuer URL) and --client-id a public client \
                registered with a loopback redirect URI (http://127.0.0.1/callback) and the scope \
                countersign:enroll. You approve the sign-in on a phone already enrolled.


                --pin asks for a new PIN twice without echo (or takes it from COUNTERSIGN_DEVICE_PIN, or a line \
                of standard input with --pin-stdin). Only a random salt is kept here; the server holds the PIN's \
                public key and counts wrong PINs. --biometric enrolls this terminal's biometric stand-in: a \
                software key released after a confirmation on the terminal, not by biometry. --push-provider and \
                --push-token register a push token at once (see `countersign device push-token`).

                An enrollment URI holds a one-time ticket: to enroll again, with other factors or on another \
                store, ask for a new one (`countersign admin enroll usr_…`).
                """)
        @OptionGroup var options: StoreOptions
        @Argument(help: "The enrollment URI (from `countersign admin enroll`, or the text of the QR code).") var uri: String?
        @Flag(name: .customLong("sign-in"), help: "Sign in in a browser and enroll with the access token, instead of a URI.")
        var signIn = false
        @Option(help: "With --sign-in: the tenant's issuer URL. Default: COUNTERSIGN_SERVER.") var server: String?
        @Option(name: .customLong("client-id"), help: "With --sign-in: the public client to sign in with. Default: COUNTERSIGN_CLIENT_ID.")
        var clientID: String?
        @Flag(name: .customLong("no-browser"), help: "With --sign-in: print the sign-in URL only, do not open a browser.")
        var noBrowser = false
        @Option(help: "The device name shown to the user and administrators. Default: this host's name.") var name: String?
        @Flag(help: "Enroll a PIN.") var pin = false
        @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input instead of asking.") var pinStdin = false
        @Flag(help: "Enroll the biometric stand-in.") var biometric = false
        @Flag(help: "Ask for a TOTP seed, for one-time codes (`countersign device totp`).") var totp = false
        @Option(name: .customLong("push-provider"), help: "With --push-token: apns or fcm.") var pushProvider: PushProvider?
        @Option(name: .customLong("push-token"), help: "A push token to register with the enrollment.") var pushToken: String?

        func validate() throws {
            guard (pushProvider == nil) == (pushToken == nil) else {
                throw ValidationError("--push-token and --push-provider go together: give both, or neither")
            }
            guard signIn == (uri == nil) else {
                throw ValidationError(signIn ? "give an enrollment URI or --sign-in, not both" : "give an enrollment URI, or --sign-in")
            }
            if signIn {
                guard setting(server, "COUNTERSIGN_SERVER") != nil else { throw ValidationError("--sign-in needs --server (or COUNTERSIGN_SERVER)") }
                guard setting(clientID, "COUNTERSIGN_CLIENT_ID") != nil else {
                    throw ValidationError("--sign-in needs --client-id (or COUNTERSIGN_CLIENT_ID): a public client with a loopback redirect URI")
                }
            }
        }

        func run() async throws {
            let deviceName = name ?? ProcessInfo.processInfo.hostName
            let newPIN = pin || pinStdin ? try PINSource(fromStandardInput: pinStdin).new() : nil
            let push = pushProvider.flatMap { provider in pushToken.map { PushRegistration(provider: provider.provider, token: $0) } }
            let authenticator = options.authenticator()
            let requested = EnrollmentFactors(pin: newPIN, biometric: biometric, totp: totp)
            let enrollment: Enrollment
            if let uri {
                enrollment = try await authenticator.enroll(
                    uri: uri, deviceName: deviceName, platform: .linux, push: push, factors: requested)
            } else {
                let server = try signInServer()
                // URLSession on Linux cannot read a 401 with a Basic challenge; AsyncHTTPClient can.
                let transport = NIOTransport(connections: 2)
                let signIn = NativeAppSignIn(
                    server: server, clientID: setting(clientID, "COUNTERSIGN_CLIENT_ID") ?? "",
                    scope: "openid countersign:enroll", transport: transport)
                let accessToken: String
                do {
                    accessToken = try await signIn.accessToken { url in
                        print("Sign in to enroll this terminal: \(url.absoluteString)")
                        if !noBrowser { Browser.open(url) }
                        print("Waiting for the sign-in to finish in the browser…")
                        // Whoever reads the output (a person, or a script through a pipe) needs the URL now.
                        StandardOutput.flush()
                    }
                    try await transport.shutdown()
                } catch {
                    try? await transport.shutdown()
                    throw error
                }
                enrollment = try await authenticator.enroll(
                    accessToken: accessToken, server: server, deviceName: deviceName, platform: .linux, push: push,
                    factors: requested)
            }
            print("Enrolled \(enrollment.deviceName) for \(enrollment.user.username) at \(enrollment.server.absoluteString)")
            print("enrollment \(enrollment.id)  device \(enrollment.deviceID)")
            if let handover = enrollment.handover {
                print("Waiting for approval on \(handover.vouchedBy): pick \(handover.number) there "
                    + "(then `countersign device handover check \(enrollment.id)`).")
            }
            let factors = try await authenticator.localFactors(enrollment.id)
            if factors.pin { print("PIN enrolled") }
            if factors.biometric { print("biometric enrolled (\(BiometricStandIn.label))") }
            if factors.totp { print("TOTP seed received: `countersign device totp \(enrollment.id)` shows the current code") }
            if totp, !factors.totp { print("The server offers no TOTP seed to this tenant's devices.") }
            if let push { print("push token registered: \(push.provider.rawValue)") }
        }

        private func signInServer() throws -> URL {
            guard let text = setting(server, "COUNTERSIGN_SERVER").map(DeviceCommand.trimmed), let url = URL(string: text),
                  url.scheme == "https" || url.scheme == "http" else {
                throw ValidationError("--server must be the tenant's issuer URL, e.g. https://id.example.com or https://id.example.com/t/acme")
            }
            return url
        }
    }

    /// `--server`, or COUNTERSIGN_SERVER, as a URL without a trailing slash.
    private static func trimmed(_ text: String) -> String {
        var text = text
        while text.hasSuffix("/") { text.removeLast() }
        return text
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
        static let configuration = CommandConfiguration(
            abstract: "Approve a pending request, with the factor it requires.",
            discussion: """
                A number to match is picked or typed (or given with --number); a PIN is asked without echo \
                (or taken from COUNTERSIGN_DEVICE_PIN, or a line of standard input with --pin-stdin, and then \
                tried only once); the biometric stand-in asks for a confirmation on the terminal; custom data \
                is asked (or given with --custom-data). Cancelling any of them denies the request as cancelled.

                A request goes to every device of its user: when several enrollments here hold it, the one \
                that can give the factor it requires answers, or the one named with --enrollment.
                """)
        @OptionGroup var options: StoreOptions
        @Argument(help: "The request's id (txn_…), as `countersign device pending` lists it.") var requestID: String
        @Option(help: "Answer as this enrollment (as `countersign device list` shows it). Default: the one that holds the request and can give its factor.")
        var enrollment: String?
        @Option(help: "The number the other screen shows, for number matching.") var number: Int64?
        @Option(name: .customLong("custom-data"), help: "The data for the tenant's custom verifier.") var customData: String?
        @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input instead of asking.") var pinStdin = false
        @Flag(name: .customLong("use-pin"), help: "Use the PIN instead of a biometric or custom check, where allowed.")
        var usePIN = false
        @Option(help: "Where the request offers alternatives: the one to use, by its number in the menu (1, 2, …). Default: asked on the terminal.")
        var alternative: Int?

        func run() async throws {
            let authenticator = options.authenticator(
                hooks: AuthenticatorHooks(picker: TerminalPicker(scripted: alternative), interstitials: TerminalInterstitials()))
            let details = try await PendingRequestLookup(authenticator: authenticator, log: options.answerLog)
                .details(of: requestID, enrollment: enrollment, answering: true)
            print(RequestSummary(details).text)
            let refusals = PINRefusals()
            let handler = TerminalChallenges(
                number: number, customData: customData, pins: PINSource(fromStandardInput: pinStdin), preferPIN: usePIN,
                refusals: refusals)
            do {
                let outcome = try await authenticator.respond(toDetails: details, with: handler)
                options.answerLog.record(outcome.acknowledgement, enrollment: details.request.enrollmentID, command: "device approve")
                print(RequestSummary.outcome(of: outcome))
            } catch let error as CountersignError {
                throw failure(error, details, refusals: refusals)
            }
        }

        /// What the terminal says when the SDK could not answer: why, and what was sent.
        private func failure(_ error: CountersignError, _ details: RequestDetails, refusals: PINRefusals) -> any Error {
            switch error {
            case .actionCancelled:
                if let refused = refusals.scriptedPINRefused {
                    return TerminalFailure("wrong PIN" + refused.attemptsLeft
                        + "; a PIN given by a script is tried only once, so \(requestID) was denied as cancelled")
                }
                return TerminalFailure("cancelled: \(requestID) was denied as cancelled")
            case .requestNotHandleable:
                return TerminalFailure("\(requestID) asks for \(RequestSummary.verification(of: details)), which enrollment "
                    + "\(details.request.enrollmentID) cannot give; nothing was answered")
            case .factorsNotEnrolled(let missing):
                let adding = missing.map { factor in
                    factor == .pin ? "`countersign device pin set \(details.request.enrollmentID)`"
                        : "`countersign device biometric add \(details.request.enrollmentID)`"
                }
                return TerminalFailure("\(requestID) asks for \(RequestSummary.verification(of: details)); enrollment "
                    + "\(details.request.enrollmentID) lacks \(missing.map(\.policyName).joined(separator: ", ")) "
                    + "(add with \(adding.joined(separator: " and "))); nothing was answered")
            default:
                return error
            }
        }
    }

    struct Deny: AsyncParsableCommand {
        enum Reason: String, ExpressibleByArgument, CaseIterable {
            case declined, cancelled
            case notRequested = "not-requested"

            var denyReason: DenyReason {
                switch self {
                case .declined: .declined
                case .cancelled: .cancelled
                case .notRequested: .notRequested
                }
            }
        }

        static let configuration = CommandConfiguration(abstract: "Deny a pending request.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The request's id (txn_…), as `countersign device pending` lists it.") var requestID: String
        @Option(help: "Deny as this enrollment (as `countersign device list` shows it). Default: the first that holds the request.")
        var enrollment: String?
        @Option(help: "Why: declined (the default), cancelled, or not-requested to report a request you did not make.")
        var reason: Reason?

        func run() async throws {
            let authenticator = options.authenticator()
            let details = try await PendingRequestLookup(authenticator: authenticator, log: options.answerLog)
                .details(of: requestID, enrollment: enrollment, answering: false)
            print(RequestSummary(details).text)
            let acknowledgement = if let reason {
                try await authenticator.deny(details, reason: reason.denyReason)
            } else {
                try await authenticator.deny(details)
            }
            options.answerLog.record(acknowledgement, enrollment: details.request.enrollmentID, command: "device deny")
            print(RequestSummary.outcome(of: acknowledgement))
        }
    }
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
        for detail in details.authorizationDetails {
            lines += AuthorizationDetailSummary(detail).lines.enumerated().map { index, line in
                (index == 0 ? "  details     " : "              ") + Self.shown(line)
            }
        }
        if let acr = details.transaction.acrValues { lines.append("  acr         \(Self.shown(acr.joined(separator: " ")))") }
        lines.append("  verify      \(Self.verification(of: details))")
        for (index, reason) in details.riskReasons.enumerated() {
            lines.append((index == 0 ? "  why         " : "              ") + Self.shown(reason))
        }
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

    /// The factor required, and whether a PIN may stand in for it.
    static func verification(of details: RequestDetails) -> String {
        if details.verification.alternatives != nil {
            return details.verification.offered.map { alternative in
                alternative.map { $0.map(name(of:)).joined(separator: " then ") } ?? "(a factor this terminal does not know)"
            }.joined(separator: ", or ")
        }
        return name(of: details.requiredFactor) + (details.allowsPINFallback ? " (or PIN)" : "")
    }

    static func name(of factor: Factor) -> String {
        switch factor {
        case .confirm: "confirmation"
        case .numberMatch: "number match"
        case .pin: "PIN"
        case .biometric: "biometric"
        case .custom: "custom authenticator"
        }
    }

    static func outcome(of acknowledgement: ApprovalAcknowledgement) -> String {
        let reason = acknowledgement.reason.map { " (\($0.rawValue))" } ?? ""
        return "\(acknowledgement.requestID): \(acknowledgement.status)\(reason) at \(Timestamps.format(acknowledgement.decidedAt))"
    }

    static func outcome(of outcome: ApprovalOutcome) -> String {
        Self.outcome(of: outcome.acknowledgement)
    }
}
