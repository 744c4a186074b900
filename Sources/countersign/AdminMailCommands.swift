import ArgumentParser
import CountersignCommandLine
import Foundation

/// `countersign admin mail …`: the tenant's mail settings, a test message and the mail it
/// queued (docs/mail.md).
struct MailCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mail", abstract: "The tenant's mail: SMTP server, sender, templates (keys with mail:manage).",
        subcommands: [Show.self, Replace.self, Delete.self, Test.self, Deliveries.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The mail settings (never the password).")
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("GET", options.tenantPath("/mail")) }
    }

    struct Replace: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set the whole mail settings: --host, --security and --from are required.",
            discussion: """
                What is not given takes its default, not the value stored before; only the password is kept when \
                --password-stdin is left out (it is required with a new --username, and again when the host, port, \
                security, username or CA change). Templates are set with --template, a JSON file of the kinds to \
                replace (docs/mail.md). Nothing is sent: check the settings with `countersign admin mail test`.
                  printf '%s\\n' "$SMTP_PASSWORD" | countersign admin mail set --host smtp.example.com \\
                    --security starttls --username countersign@example.com --password-stdin \\
                    --from no-reply@example.com --from-name "Example sign-in"
                """)
        @OptionGroup var options: AdminOptions
        @Option(help: "The SMTP server's host name or IP address.") var host: String
        @Option(help: "Port; by default 465 for tls, 587 for starttls, 25 for plain.") var port: Int?
        @Option(help: "tls (TLS from the first byte), starttls (required), or plain (a server on this host only).")
        var security: String
        @Option(help: "The SMTP login; without it, mail is sent without authentication.") var username: String?
        @Flag(name: .customLong("password-stdin"), help: """
            Read the SMTP password from standard input (asked without echo on a terminal, else its first line).
            """)
        var passwordStdin = false
        @Option(name: .customLong("ca-certificate-file"), help: "PEM certificates to trust for the server's, instead of the system's.")
        var caFile: String?
        @Option(name: .customLong("from"), help: "The sender's address.") var fromAddress: String
        @Option(name: .customLong("from-name"), help: "The sender's name; the tenant's display name when left out.")
        var fromName: String?
        @Option(help: "A JSON file of templates by kind: {\"device_added\": {\"subject\": \"…\", \"text\": \"…\"}}.")
        var template: String?

        func run() async throws {
            var body: [String: Any] = ["host": host, "security": security, "from_address": fromAddress]
            if let port { body["port"] = port }
            if let username { body["username"] = username }
            if let fromName { body["from_name"] = fromName }
            if let caFile { body["ca_certificate"] = try String(contentsOfFile: caFile, encoding: .utf8) }
            if let template {
                body["templates"] = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: template)))
            }
            if passwordStdin {
                guard let password = readSecretLine(prompt: "SMTP password: ") else {
                    throw TerminalFailure("--password-stdin reads the password from standard input, which holds no line")
                }
                body["password"] = password
            }
            try await options.client().print("PUT", options.tenantPath("/mail"), body: body)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the mail settings; no more mail is sent.")
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("DELETE", options.tenantPath("/mail")) }
    }

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a test message now, and print the mail server's answer if it refuses.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "Where the test message goes.") var to: String
        func run() async throws { try await options.client().print("POST", options.tenantPath("/mail/test"), body: ["to": to]) }
    }

    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Recent mail and how sending it went (never its text).")
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("GET", options.tenantPath("/mail/deliveries")) }
    }
}
