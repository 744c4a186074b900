import ArgumentParser
import Foundation

/// `countersign admin trusted-issuer …`: the identity providers whose tokens enroll phones for
/// the tenant's users (docs/api.md §19, docs/protocol.md §8.6).
struct TrustedIssuerCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trusted-issuer",
        abstract: "Identity providers whose tokens enroll phones for the tenant's users (system keys with tenants:manage).",
        subcommands: [List.self, Create.self, Show.self, Update.self, Delete.self])

    struct Fields: ParsableArguments {
        @Option(help: "The provider's issuer identifier: the exact iss of its tokens.") var issuer: String?
        @Option(name: .customLong("jwks-uri"), help: "Where the provider publishes its keys (replaces inline keys).")
        var jwksURI: String?
        @Option(name: .customLong("jwks-file"), help: "A JSON Web Key Set file of the provider's public keys (replaces a jwks-uri).")
        var jwksFile: String?
        @Option(help: "A value the token's aud must contain: the app's client id at the provider, or its API audience.")
        var audience: String?
        @Option(name: .customLong("username-claim"), help: "The claim holding the Countersign username (default preferred_username).")
        var usernameClaim: String?
        @Option(name: .customLong("required-scope"),
                help: "The scope a token must carry (default countersign:enroll; \"\" for none, as for ID tokens).")
        var requiredScope: String?

        func body() throws -> [String: Any] {
            var body: [String: Any] = [:]
            if let issuer { body["issuer"] = issuer }
            if let jwksURI { body["jwks_uri"] = jwksURI }
            if let jwksFile { body["jwks"] = try ClientCommands.Fields.keySet(at: jwksFile) }
            if let audience { body["audience"] = audience }
            if let usernameClaim { body["username_claim"] = usernameClaim }
            if let requiredScope { body["required_scope"] = requiredScope }
            return body
        }
    }

    struct List: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("GET", options.tenantPath("/trusted-issuers")) }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Trust a provider: --issuer, --audience, and --jwks-uri or --jwks-file are required.")
        @OptionGroup var options: AdminOptions
        @OptionGroup var fields: Fields
        func run() async throws {
            try await options.client().print("POST", options.tenantPath("/trusted-issuers"), body: try fields.body())
        }
    }

    struct Show: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var id: String
        func run() async throws { try await options.client().print("GET", options.tenantPath("/trusted-issuers/\(id)")) }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change the fields given; the others stay as they are.")
        @OptionGroup var options: AdminOptions
        @Argument var id: String
        @OptionGroup var fields: Fields
        func run() async throws {
            try await options.client().print("PATCH", options.tenantPath("/trusted-issuers/\(id)"), body: try fields.body())
        }
    }

    struct Delete: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var id: String
        func run() async throws { try await options.client().print("DELETE", options.tenantPath("/trusted-issuers/\(id)")) }
    }
}
