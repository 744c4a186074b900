import ArgumentParser
import CountersignCommandLine
import Foundation

/// `countersign admin push …`: the tenant's APNs and FCM credentials (docs/push.md).
struct PushCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Push credentials of the tenant (keys with push-credentials:manage).",
        subcommands: [Show.self, SetAPNsCertificate.self, SetAPNsToken.self, SetFCM.self, Delete.self, Deliveries.self, Recent.self])

    enum Environment: String, ExpressibleByArgument, CaseIterable {
        case sandbox, production
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The credentials (never their secret parts).")
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("GET", options.tenantPath("/push-credentials")) }
    }

    struct SetAPNsCertificate: AsyncParsableCommand {
        static let passwordVariable = "COUNTERSIGN_APNS_CERTIFICATE_PASSWORD"
        static let configuration = CommandConfiguration(
            commandName: "set-apns-certificate", abstract: "An APNs client certificate (.p12) for a client app key.",
            discussion: """
                The password of the .p12 file is taken from \(passwordVariable) when it is set (set it empty for \
                a file without a password). Otherwise it is asked on the terminal without echo, or, when standard \
                input is not a terminal, read as its first line:
                  printf '%s\\n' "$P12_PASSWORD" | countersign admin push set-apns-certificate bank-ios --file bank-ios.p12 --topic com.example.bank
                """)
        @OptionGroup var options: AdminOptions
        @Argument(help: "The client app key the certificate is for.") var clientAppKey: String
        @Option(help: "The PKCS#12 file. Its password: \(passwordVariable), else the terminal, else a line of standard input.") var file: String
        @Option(help: "The APNs topic: the app's bundle id.") var topic: String
        @Option(help: "sandbox or production.") var environment: Environment = .production
        func run() async throws {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            let password = try certificatePassword()
            try await options.client().print("PUT", options.tenantPath("/push-credentials/apns-certificates/\(clientAppKey)"),
                                             body: ["certificate": data.base64EncodedString(), "password": password,
                                                    "topic": topic, "environment": environment.rawValue])
        }

        /// The variable's value, even empty; else asked, or the first line of a pipe.
        private func certificatePassword() throws -> String {
            if let variable = ProcessInfo.processInfo.environment[Self.passwordVariable] { return variable }
            guard let password = readSecretLine(prompt: "Password of \(file): ") else {
                throw TerminalFailure("""
                    the password of \(file) is needed, and standard input is not a terminal and holds no line: set \
                    \(Self.passwordVariable) (empty for a file without a password), or write the password as the \
                    first line of standard input
                    """)
            }
            return password
        }
    }

    struct SetAPNsToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-apns-token", abstract: "An APNs token-signing key (.p8) with its key id and team id.")
        @OptionGroup var options: AdminOptions
        @Option(name: .customLong("key-id")) var keyID: String
        @Option(name: .customLong("team-id")) var teamID: String
        @Option(help: "The .p8 file.") var file: String
        @Option(help: "The APNs topic: the app's bundle id.") var topic: String
        @Option(help: "sandbox or production.") var environment: Environment = .production
        func run() async throws {
            let pem = try String(contentsOfFile: file, encoding: .utf8)
            try await options.client().print("PUT", options.tenantPath("/push-credentials/apns-token"), body: [
                "key_id": keyID, "team_id": teamID, "private_key": pem, "topic": topic, "environment": environment.rawValue])
        }
    }

    struct SetFCM: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-fcm", abstract: "A Google service account's JSON key file for FCM.")
        @OptionGroup var options: AdminOptions
        @Option(help: "The service account's JSON key file.") var file: String
        func run() async throws {
            let json = try String(contentsOfFile: file, encoding: .utf8)
            try await options.client().print("PUT", options.tenantPath("/push-credentials/fcm"), body: ["service_account": json])
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a credential: apns-certificate <client app key>, apns-token or fcm.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "apns-certificate, apns-token or fcm.") var kind: String
        @Argument(help: "The client app key (apns-certificate only).") var clientAppKey: String?
        func run() async throws {
            let path: String
            switch (kind, clientAppKey) {
            case ("apns-certificate", let key?): path = "/push-credentials/apns-certificates/\(key)"
            case ("apns-token", nil), ("fcm", nil): path = "/push-credentials/\(kind)"
            default: throw ValidationError("name apns-certificate <client app key>, apns-token or fcm")
            }
            try await options.client().print("DELETE", options.tenantPath(path))
        }
    }

    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "For one request: each device, its push token's state, and every notification sent to it.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The request id (txn_…).") var requestID: String
        func run() async throws {
            try await options.client().print("GET", options.tenantPath("/approvals/\(requestID)/deliveries"))
        }
    }

    struct Recent: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The tenant's push notifications, newest first, each with its request and device.")
        @OptionGroup var options: AdminOptions
        @OptionGroup var page: PageOptions
        @Option(help: "Only those in this state: queued, sending, sent, failed or cancelled.") var status: String?
        func run() async throws {
            try await options.client().print("GET", options.tenantPath("/push-deliveries") + page.query(("status", status)))
        }
    }
}
