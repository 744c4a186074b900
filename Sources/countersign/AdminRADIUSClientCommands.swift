import ArgumentParser
import CountersignCommandLine
import Foundation

/// `countersign admin radius-client …`: the gateways and network devices of the tenant that ask
/// over RADIUS (docs/api.md §22). A shared secret is never an option, which process lists show:
/// Countersign generates it, or `--secret-stdin` reads the one the gateway already has.
struct RADIUSClientCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "radius-client",
        abstract: "Gateways and network devices of the tenant that ask over RADIUS (clients:read, clients:manage).",
        subcommands: [List.self, Create.self, Show.self, Update.self, Delete.self, RotateSecret.self])

    struct Fields: ParsableArguments {
        @Option(name: .customLong("network"),
                help: "A network its requests come from, in CIDR notation, e.g. 192.0.2.0/24 (repeat; replaces them all).")
        var networks: [String] = []
        @Option(help: "push, push-number, passcode or auto (default push).") var mode: String?
        @Option(name: .customLong("wait-seconds"),
                help: "How long an answer waits for the user's decision: 3 to 120, under the gateway's timeout (default 20).")
        var waitSeconds: Int?
        @Flag(name: .customLong("strip-realm"), inversion: .prefixedNo, help: "Look up alice@example.com as alice.")
        var stripRealm: Bool?
        @Flag(name: .customLong("strip-domain"), inversion: .prefixedNo, help: "Look up EXAMPLE\\alice as alice.")
        var stripDomain: Bool?
        @Option(name: .customLong("unenrolled-users"),
                help: "What a user without a device gets: reject (the default) or accept.")
        var unenrolledUsers: String?
        @Flag(name: .customLong("directory-password"), inversion: .prefixedNo, help: """
            Whether User-Password is the user's directory password, checked before the push (push and push-number \
            modes; needs the tenant's directory).
            """)
        var directoryPassword: Bool?
        @Option(name: .customLong("allowed-group"),
                help: "Only members of this group (name or id) may log in through it (repeat; replaces them all; \"\" allows everyone).")
        var allowedGroups: [String] = []
        @Option(name: .customLong("group-reply-attribute"), help: """
            GROUP:NAME=VALUE an Access-Accept carries for members of GROUP (name or id), after the client's own, \
            e.g. staff:Filter-Id=vpn-staff (repeat; replaces them all; "" removes them).
            """)
        var groupReplyAttributes: [String] = []
        @Option(name: .customLong("reply-attribute"),
                help: "NAME=VALUE an Access-Accept carries, e.g. Filter-Id=vpn-users (repeat; replaces them all; \"\" removes them).")
        var replyAttributes: [String] = []

        func body(name: String?) throws -> [String: Any] {
            var body: [String: Any] = [:]
            if let name { body["name"] = name }
            if !networks.isEmpty { body["networks"] = networks }
            if let mode { body["mode"] = mode }
            if let waitSeconds { body["wait_seconds"] = waitSeconds }
            if let stripRealm { body["strip_realm"] = stripRealm }
            if let stripDomain { body["strip_domain"] = stripDomain }
            if let unenrolledUsers { body["unenrolled_users"] = unenrolledUsers }
            if let directoryPassword { body["directory_password"] = directoryPassword }
            if !allowedGroups.isEmpty { body["allowed_groups"] = allowedGroups.filter { !$0.isEmpty } }
            if !groupReplyAttributes.isEmpty {
                // Grouped by group, in the order given.
                var groups: [(group: String, attributes: [[String: String]])] = []
                for entry in groupReplyAttributes where !entry.isEmpty {
                    guard let colon = entry.firstIndex(of: ":"), let equals = entry[colon...].firstIndex(of: "=") else {
                        throw ValidationError(
                            "--group-reply-attribute takes GROUP:NAME=VALUE, e.g. staff:Filter-Id=vpn-staff, not \(entry)")
                    }
                    let group = String(entry[..<colon])
                    let attribute = ["name": String(entry[entry.index(after: colon)..<equals]),
                                     "value": String(entry[entry.index(after: equals)...])]
                    if let index = groups.firstIndex(where: { $0.group == group }) {
                        groups[index].attributes.append(attribute)
                    } else {
                        groups.append((group, [attribute]))
                    }
                }
                body["group_reply_attributes"] = groups.map { ["group": $0.group, "attributes": $0.attributes] as [String: Any] }
            }
            if !replyAttributes.isEmpty {
                body["reply_attributes"] = try replyAttributes.filter { !$0.isEmpty }.map { pair -> [String: String] in
                    guard let equals = pair.firstIndex(of: "=") else {
                        throw ValidationError("--reply-attribute takes NAME=VALUE, e.g. Filter-Id=vpn-users, not \(pair)")
                    }
                    return ["name": String(pair[..<equals]), "value": String(pair[pair.index(after: equals)...])]
                }
            }
            return body
        }
    }

    /// Where the shared secret comes from: generated by Countersign, or typed by the administrator.
    struct SecretSource: ParsableArguments {
        @Flag(name: .customLong("secret-stdin"), help: """
            Read the shared secret the gateway already has from standard input (asked without echo on a terminal, \
            else its first line) instead of having Countersign generate one.
            """)
        var secretStdin = false

        /// The secret given, or nil for a generated one.
        func secret() throws -> String? {
            guard secretStdin else { return nil }
            guard let secret = readSecretLine(prompt: "Shared secret: ") else {
                throw TerminalFailure("--secret-stdin reads the shared secret from standard input, which holds no line")
            }
            return secret
        }
    }

    struct List: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("GET", options.tenantPath("/radius-clients")) }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a gateway: --name and --network are required.",
            discussion: """
                The answer carries the shared secret Countersign generated, in "secret": it is shown only this once. \
                With --secret-stdin, the secret given is kept and not shown back:
                  printf '%s\\n' "$RADIUS_SECRET" | countersign admin radius-client create --name "VPN" --network 192.0.2.0/24 --secret-stdin
                """)
        @OptionGroup var options: AdminOptions
        @Option(help: "What the gateway is called: 1 to 100 characters.") var name: String
        @OptionGroup var fields: Fields
        @OptionGroup var source: SecretSource
        func run() async throws {
            var body = try fields.body(name: name)
            if let secret = try source.secret() { body["secret"] = secret }
            try await options.client().print("POST", options.tenantPath("/radius-clients"), body: body)
        }
    }

    struct Show: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var id: String
        func run() async throws { try await options.client().print("GET", options.tenantPath("/radius-clients/\(id)")) }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the fields given; the others stay as they are (the secret: rotate-secret).")
        @OptionGroup var options: AdminOptions
        @Argument var id: String
        @Option var name: String?
        @OptionGroup var fields: Fields
        func run() async throws {
            try await options.client().print("PATCH", options.tenantPath("/radius-clients/\(id)"), body: try fields.body(name: name))
        }
    }

    struct Delete: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var id: String
        func run() async throws { try await options.client().print("DELETE", options.tenantPath("/radius-clients/\(id)")) }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the shared secret; the old one stops working at once.",
            discussion: """
                The answer carries the new secret Countersign generated, in "secret": it is shown only this once. \
                With --secret-stdin, the secret given is kept and not shown back.
                """)
        @OptionGroup var options: AdminOptions
        @Argument var id: String
        @OptionGroup var source: SecretSource
        func run() async throws {
            let body = try source.secret().map { ["secret": $0] }
            try await options.client().print("POST", options.tenantPath("/radius-clients/\(id)/secret"), body: body)
        }
    }
}
