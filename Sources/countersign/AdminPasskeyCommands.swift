import ArgumentParser
import Foundation

/// `countersign admin passkey …`: a user's passkeys as the administration API shows them
/// (docs/api.md §20): listed with `devices:read`, removed with `devices:manage`, as phones are.
struct PasskeyAdminCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passkey", abstract: "Passkeys of the tenant's users.",
        subcommands: [List.self, Show.self, Remove.self, Findings.self])

    /// An id as one path segment: whatever is typed, it cannot reach another path.
    static func segment(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? id
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The user's passkeys (never their keys).")
        @OptionGroup var options: AdminOptions
        @Option(help: "The user's id (usr_…).") var user: String
        func run() async throws {
            try await options.client().print("GET", options.tenantPath("/users/\(PasskeyAdminCommands.segment(user))/passkeys"))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One of the user's passkeys.")
        @OptionGroup var options: AdminOptions
        @Option(help: "The user's id (usr_…).") var user: String
        @Option(help: "The passkey's id (pk_…), as passkey list shows it.") var passkey: String
        func run() async throws {
            let path = "/users/\(PasskeyAdminCommands.segment(user))/passkeys/\(PasskeyAdminCommands.segment(passkey))"
            try await options.client().print("GET", options.tenantPath(path))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a passkey: the user can no longer sign in with it. Prints nothing when it is removed.")
        @OptionGroup var options: AdminOptions
        @Option(help: "The user's id (usr_…).") var user: String
        @Option(help: "The passkey's id (pk_…), as passkey list shows it.") var passkey: String
        func run() async throws {
            let path = "/users/\(PasskeyAdminCommands.segment(user))/passkeys/\(PasskeyAdminCommands.segment(passkey))"
            try await options.client().print("DELETE", options.tenantPath(path))
        }
    }

    struct Findings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The tenant's passkeys its passkey rules, or the FIDO metadata, would refuse today, and why.")
        @OptionGroup var options: AdminOptions
        @OptionGroup var page: PageOptions
        func run() async throws {
            try await options.client().print("GET", options.tenantPath("/passkey-findings") + page.query())
        }
    }
}

/// `countersign admin metadata …`: the FIDO metadata the server loads (docs/passkeys.md §1).
struct MetadataCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metadata", abstract: "The FIDO Metadata Service BLOB passkey registrations are checked against.",
        subcommands: [Status.self, Refresh.self, Show.self], defaultSubcommand: Status.self)

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Which BLOB is loaded, and how the last read went.")
        @OptionGroup var options: AdminOptions
        func run() async throws {
            try await options.client().print("GET", "/admin/v1/authenticator-metadata")
        }
    }

    struct Refresh: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Read the source and load its BLOB now (system keys).")
        @OptionGroup var options: AdminOptions
        func run() async throws {
            try await options.client().print("POST", "/admin/v1/authenticator-metadata/refresh")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An authenticator model's entry: its status and statement.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The model's AAGUID.") var aaguid: String
        func run() async throws {
            try await options.client().print("GET", "/admin/v1/authenticator-metadata/\(PasskeyAdminCommands.segment(aaguid))")
        }
    }
}
