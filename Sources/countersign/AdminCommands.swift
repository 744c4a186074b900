import ArgumentParser
import CountersignCommandLine
import CountersignServer
import Foundation

struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Administer a running server through its administration API (docs/api.md).",
        subcommands: [TenantCommands.self, KeyCommands.self, ClientCommands.self, UserCommands.self, GroupCommands.self,
                      EnrollCommand.self, TicketCommands.self, RecoveryCodeCommands.self, AccessPassCommands.self,
                      RememberedBrowserCommands.self,
                      DeviceAdminCommands.self, AuditCommand.self,
                      PushCommands.self, PolicyCommands.self, AuthorizationTypeCommands.self,
                      WebhookCommands.self, TrustedIssuerCommands.self, PasskeyAdminCommands.self, MetadataCommands.self,
                      RADIUSClientCommands.self, DirectoryCommands.self, MailCommands.self, SharedSignalsCommands.self])
}

struct TenantCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenant", abstract: "Tenants (system keys with tenants:manage).",
        subcommands: [List.self, Create.self, Show.self, Rename.self, Delete.self])

    struct List: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @OptionGroup var page: PageOptions
        func run() async throws { try await options.client().print("GET", "/admin/v1/tenants" + page.query()) }
    }

    struct Create: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument(help: "Slug: lower-case letters, digits and hyphens.") var slug: String
        @Option(name: .customLong("display-name")) var displayName: String
        func run() async throws {
            try await options.client().print("POST", "/admin/v1/tenants", body: ["slug": slug, "display_name": displayName])
        }
    }

    struct Show: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var slug: String
        func run() async throws { try await options.client().print("GET", "/admin/v1/tenants/\(slug)") }
    }

    struct Rename: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var slug: String
        @Argument(help: "The new display name.") var displayName: String
        func run() async throws {
            try await options.client().print("PATCH", "/admin/v1/tenants/\(slug)", body: ["display_name": displayName])
        }
    }

    struct Delete: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var slug: String
        func run() async throws { try await options.client().print("DELETE", "/admin/v1/tenants/\(slug)") }
    }
}

struct KeyCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key", abstract: "Admin API keys of the tenant, or system keys with --system.",
        subcommands: [List.self, Create.self, Revoke.self])

    struct List: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @OptionGroup var page: PageOptions
        @Flag(help: "System keys instead of the tenant's.") var system = false
        func run() async throws {
            let path = system ? "/admin/v1/admin-keys" : options.tenantPath("/admin-keys")
            try await options.client().print("GET", path + page.query())
        }
    }

    struct Create: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Option var name: String
        @Option(name: .customLong("right"), help: "A right to grant (repeat): \(AdminRight.allCases.map(\.rawValue).joined(separator: ", ")).")
        var rights: [String]
        @Flag(help: "A system key (reaches every tenant).") var system = false
        func run() async throws {
            let path = system ? "/admin/v1/admin-keys" : options.tenantPath("/admin-keys")
            try await options.client().print("POST", path, body: ["name": name, "rights": rights])
        }
    }

    struct Revoke: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var id: String
        @Flag(help: "The key is a system key.") var system = false
        func run() async throws {
            let path = system ? "/admin/v1/admin-keys/\(id)" : options.tenantPath("/admin-keys/\(id)")
            try await options.client().print("DELETE", path)
        }
    }
}

struct ClientCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client", abstract: "Relying parties (clients) of the tenant.",
        subcommands: [List.self, Create.self, Show.self, Update.self, Delete.self, RotateSecret.self])

    struct Fields: ParsableArguments {
        @Option(help: "Allowed scope (repeat).") var scope: [String] = []
        @Option(help: "poll, ping or push.") var mode: String?
        @Option(name: .customLong("notification-endpoint")) var notificationEndpoint: String?
        @Option(name: .customLong("default-acr"), help: "The class a request requires when it asks for none (empty: the tenant's).")
        var defaultAcr: String?
        @Option(name: .customLong("minimum-acr"), help: "No request requires less (empty: only the tenant's minimum).")
        var minimumAcr: String?
        @Option(name: .customLong("auth-method"),
                help: "client_secret_basic, client_secret_post, private_key_jwt, or none for a public client (a native app).")
        var authMethod: String?
        @Option(name: .customLong("redirect-uri"),
                help: "Where the authorization code flow may send the user back (repeat; \"\" removes them all).")
        var redirectURI: [String] = []
        @Option(name: .customLong("post-logout-redirect-uri"),
                help: "Where sign-out may send the user back (repeat; \"\" removes them all).")
        var postLogoutRedirectURI: [String] = []
        @Flag(name: .customLong("require-pushed-requests"), inversion: .prefixedNo,
              help: "Whether authorization requests must be pushed first (RFC 9126).")
        var requirePushedRequests: Bool?
        @Flag(name: .customLong("directory-password"), inversion: .prefixedNo,
              help: "Whether the hosted sign-in asks for the user's directory password before the push (needs the tenant's directory).")
        var directoryPassword: Bool?
        @Option(name: .customLong("allowed-group"),
                help: "Only members of this group (name or id) may sign in to the client (repeat; replaces them all; \"\" allows everyone).")
        var allowedGroups: [String] = []
        @Option(name: .customLong("jwks-file"), help: "A JSON Web Key Set file of the client's public keys ({\"keys\": []} removes them).")
        var jwksFile: String?
        @Flag(name: .customLong("require-signed-requests"), inversion: .prefixedNo,
              help: "Whether the client must sign its authentication requests (request).")
        var requireSignedRequests: Bool?
        @Flag(name: .customLong("user-code-parameter"), inversion: .prefixedNo,
              help: "Whether the client sends the user's user_code.")
        var userCodeParameter: Bool?
        @Option(name: .customLong("requests-per-minute"),
                help: "bc-authorize requests the client may send per minute (0: no limit; empty: the tenant's).")
        var requestsPerMinute: String?
        @Option(name: .customLong("remember-browser-days"),
                help: "Days the hosted sign-in may remember a browser for (0: never, to 90; empty: the tenant's).")
        var rememberBrowserDays: String?
        @Option(name: .customLong("authorization-details-types"),
                help: "Space-separated RFC 9396 types the client may request, each in the tenant's registry (empty: none).")
        var authorizationDetailsTypes: String?
        @Option(name: .customLong("id-token-signed-response-alg"),
                help: "ES256 or RS256: what the client's ID tokens and access tokens are signed with.")
        var idTokenSignedResponseAlg: String?
        @Option(help: ArgumentHelp(AlternativesArgument.help + " Replaces the client's own policy; \"\" removes it (the tenant's applies)."))
        var alternatives: [String] = []

        func body(name: String?) throws -> [String: Any] {
            var body: [String: Any] = [:]
            if let name { body["name"] = name }
            if !scope.isEmpty { body["scopes"] = scope }
            if let mode { body["token_delivery_mode"] = mode }
            if let notificationEndpoint { body["notification_endpoint"] = notificationEndpoint }
            if let defaultAcr { body["default_acr"] = defaultAcr }
            if alternatives == [""] {
                body["authenticators"] = NSNull()
            } else if !alternatives.isEmpty {
                body["authenticators"] = try AlternativesArgument.merged(alternatives, into: nil) ?? NSNull()
            }
            if let minimumAcr { body["minimum_acr"] = minimumAcr }
            if let authMethod { body["token_endpoint_auth_method"] = authMethod }
            if !redirectURI.isEmpty { body["redirect_uris"] = redirectURI.filter { !$0.isEmpty } }
            if !postLogoutRedirectURI.isEmpty { body["post_logout_redirect_uris"] = postLogoutRedirectURI.filter { !$0.isEmpty } }
            if let requirePushedRequests { body["require_pushed_authorization_requests"] = requirePushedRequests }
            if let directoryPassword { body["directory_password"] = directoryPassword }
            if !allowedGroups.isEmpty { body["allowed_groups"] = allowedGroups.filter { !$0.isEmpty } }
            if let jwksFile { body["jwks"] = try Self.keySet(at: jwksFile) }
            if let requireSignedRequests { body["require_signed_request_object"] = requireSignedRequests }
            if let userCodeParameter { body["backchannel_user_code_parameter"] = userCodeParameter }
            if let requestsPerMinute {
                // An empty value sends null: the client takes the tenant's limit again.
                if let limit = Int(requestsPerMinute) {
                    body["backchannel_requests_per_minute"] = limit
                } else if requestsPerMinute.isEmpty {
                    body["backchannel_requests_per_minute"] = NSNull()
                } else {
                    throw AdminAPIClient.Failure(description: "--requests-per-minute takes a whole number, or \"\" for the tenant's")
                }
            }
            if let rememberBrowserDays {
                if let days = Int(rememberBrowserDays) {
                    body["remember_browser_days"] = days
                } else if rememberBrowserDays.isEmpty {
                    body["remember_browser_days"] = NSNull()
                } else {
                    throw AdminAPIClient.Failure(description: "--remember-browser-days takes a whole number, or \"\" for the tenant's")
                }
            }
            if let idTokenSignedResponseAlg { body["id_token_signed_response_alg"] = idTokenSignedResponseAlg }
            if let authorizationDetailsTypes {
                body["authorization_details_types"] = authorizationDetailsTypes.split(separator: " ").map(String.init)
            }
            return body
        }

        /// The key set in `path`, sent as it is: the server checks it.
        static func keySet(at path: String) throws -> Any {
            guard let data = FileManager.default.contents(atPath: path),
                  let keySet = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw AdminAPIClient.Failure(description: "\(path) is not a readable JSON object")
            }
            return keySet
        }
    }

    struct List: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @OptionGroup var page: PageOptions
        func run() async throws { try await options.client().print("GET", options.tenantPath("/clients") + page.query()) }
    }

    struct Create: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Option var name: String
        @OptionGroup var fields: Fields
        func run() async throws {
            try await options.client().print("POST", options.tenantPath("/clients"), body: try fields.body(name: name))
        }
    }

    struct Show: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var clientID: String
        func run() async throws { try await options.client().print("GET", options.tenantPath("/clients/\(clientID)")) }
    }

    struct Update: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var clientID: String
        @Option var name: String?
        @OptionGroup var fields: Fields
        func run() async throws {
            try await options.client().print("PATCH", options.tenantPath("/clients/\(clientID)"), body: try fields.body(name: name))
        }
    }

    struct Delete: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var clientID: String
        func run() async throws { try await options.client().print("DELETE", options.tenantPath("/clients/\(clientID)")) }
    }

    struct RotateSecret: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var clientID: String
        func run() async throws { try await options.client().print("POST", options.tenantPath("/clients/\(clientID)/secret")) }
    }
}
