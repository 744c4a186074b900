import ArgumentParser
import CountersignCommandLine
import Foundation

/// `countersign admin directory …`: the tenant's LDAP directory, its connection test and its sync
/// (docs/api.md §24). The service account's password is never an option, which process lists
/// show: `--bind-password-stdin` reads it.
struct DirectoryCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "directory",
        abstract: "The tenant's LDAP directory (Active Directory, OpenLDAP) as a user source (directory:manage).",
        subcommands: [Show.self, Replace.self, Delete.self, Test.self, Sync.self, LastSync.self])

    /// The settings of `set`, each flag a member of the API's body. A flag not given is left out,
    /// so it takes its default (the kind's, for the filter, the attributes and the groups), not
    /// the stored value: `set` replaces the whole directory.
    struct Fields: ParsableArguments {
        @Option(name: .customLong("settings-file"), help: """
            A JSON file of the settings as the API takes them (docs/api.md §24); the flags below override its members. \
            A bind_password in it is refused: use --bind-password-stdin.
            """)
        var settingsFile: String?
        @Option(help: "active_directory or openldap: sets the defaults of the filter, attributes and groups.") var kind: String?
        @Option(name: .customLong("ldap-server"),
                help: "A directory server, ldaps://host[:port] or ldap://host[:port], tried in the order given (repeat).")
        var servers: [String] = []
        @Option(help: "ldaps (the default), starttls, or plain (loopback servers only).") var security: String?
        @Option(name: .customLong("ca-certificate-file"),
                help: "A PEM file of the CA certificates to trust for the servers' certificates instead of the system's.")
        var caCertificateFile: String?
        @Option(name: .customLong("bind-dn"), help: "The service account's DN.") var bindDN: String?
        @Option(name: .customLong("user-base-dn"), help: "Where users are searched for.") var userBaseDN: String?
        @Option(name: .customLong("user-filter"), help: "Which entries are users, e.g. (objectClass=inetOrgPerson).")
        var userFilter: String?
        @Option(name: .customLong("username-attribute"), help: "sAMAccountName, uid, …") var usernameAttribute: String?
        @Option(name: .customLong("display-name-attribute")) var displayNameAttribute: String?
        @Option(name: .customLong("email-attribute")) var emailAttribute: String?
        @Option(name: .customLong("id-attribute"), help: "The stable id a rename keeps: objectGUID, entryUUID, …") var idAttribute: String?
        @Option(name: .customLong("member-of-attribute")) var memberOfAttribute: String?
        @Flag(name: .customLong("groups"), inversion: .prefixedNo, help: "Whether groups are synced (default: yes).")
        var groupsEnabled: Bool?
        @Option(name: .customLong("group-base-dn"), help: "Where groups are searched for (default: the user base).")
        var groupBaseDN: String?
        @Option(name: .customLong("group-filter")) var groupFilter: String?
        @Option(name: .customLong("group-name-attribute")) var groupNameAttribute: String?
        @Option(name: .customLong("group-member-attribute")) var groupMemberAttribute: String?
        @Option(name: .customLong("group-membership"),
                help: "member_of (read each user's memberOf) or member (read each group's members).")
        var groupMembership: String?
        @Flag(name: .customLong("nested-groups"), inversion: .prefixedNo,
              help: "Whether a member of a nested group is in the groups above it (default: yes).")
        var nestedGroups: Bool?
        @Option(name: .customLong("connect-timeout-seconds"), help: "1 to 60 (default 5).") var connectTimeoutSeconds: Int?
        @Option(name: .customLong("operation-timeout-seconds"), help: "1 to 600 (default 30).") var operationTimeoutSeconds: Int?
        @Option(name: .customLong("page-size"), help: "1 to 1000 (default 500).") var pageSize: Int?
        @Option(name: .customLong("sync-interval-minutes"), help: "0 (on demand only) or 5 to 10080 (default 60).")
        var syncIntervalMinutes: Int?
        @Flag(name: .customLong("just-in-time"), inversion: .prefixedNo,
              help: "Whether an unknown username is looked up in the directory when first used (default: yes).")
        var justInTime: Bool?

        func body() throws -> [String: Any] {
            var body: [String: Any] = [:]
            if let settingsFile {
                guard let data = FileManager.default.contents(atPath: settingsFile),
                      let settings = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                    throw ValidationError("\(settingsFile) is not a readable JSON object")
                }
                guard settings["bind_password"] == nil else {
                    throw ValidationError("\(settingsFile) holds bind_password: keep the password out of files and use --bind-password-stdin")
                }
                body = settings
            }
            if let kind { body["kind"] = kind }
            if !servers.isEmpty { body["servers"] = servers }
            if let security { body["security"] = security }
            if let caCertificateFile {
                guard let pem = try? String(contentsOfFile: caCertificateFile, encoding: .utf8) else {
                    throw ValidationError("\(caCertificateFile) is not a readable text file")
                }
                body["ca_certificate"] = pem
            }
            if let bindDN { body["bind_dn"] = bindDN }
            if let userBaseDN { body["user_base_dn"] = userBaseDN }
            if let userFilter { body["user_filter"] = userFilter }
            var attributes = body["attributes"] as? [String: Any] ?? [:]
            for case let (name, value?) in [("username", usernameAttribute), ("display_name", displayNameAttribute),
                                            ("email", emailAttribute), ("id", idAttribute), ("member_of", memberOfAttribute)] {
                attributes[name] = value
            }
            if !attributes.isEmpty { body["attributes"] = attributes }
            var groups = body["groups"] as? [String: Any] ?? [:]
            for case let (name, value?) in [("base_dn", groupBaseDN), ("filter", groupFilter), ("name_attribute", groupNameAttribute),
                                            ("member_attribute", groupMemberAttribute), ("membership", groupMembership)] {
                groups[name] = value
            }
            if let groupsEnabled { groups["enabled"] = groupsEnabled }
            if let nestedGroups { groups["nested"] = nestedGroups }
            if !groups.isEmpty { body["groups"] = groups }
            for case let (name, value?) in [("connect_timeout_seconds", connectTimeoutSeconds),
                                            ("operation_timeout_seconds", operationTimeoutSeconds), ("page_size", pageSize),
                                            ("sync_interval_minutes", syncIntervalMinutes)] {
                body[name] = value
            }
            if let justInTime { body["just_in_time"] = justInTime }
            return body
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The directory's settings (never the password).")
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("GET", options.tenantPath("/directory")) }
    }

    struct Replace: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set the whole directory: --kind, --ldap-server, --bind-dn and --user-base-dn are required.",
            discussion: """
                What is not given takes its default, not the value stored before; only the password is kept when \
                --bind-password-stdin is left out (it is required the first time, and again when the servers, security, \
                CA or bind DN change). Nothing is sent to the directory: \
                check the settings with `countersign admin directory test`.
                  printf '%s\\n' "$LDAP_PASSWORD" | countersign admin directory set --kind openldap \\
                    --ldap-server ldaps://ldap1.example.com --ldap-server ldaps://ldap2.example.com \\
                    --bind-dn cn=countersign,ou=services,dc=example,dc=com --user-base-dn ou=people,dc=example,dc=com \\
                    --bind-password-stdin
                """)
        @OptionGroup var options: AdminOptions
        @OptionGroup var fields: Fields
        @Flag(name: .customLong("bind-password-stdin"), help: """
            Read the service account's password from standard input (asked without echo on a terminal, else its first line).
            """)
        var bindPasswordStdin = false

        func run() async throws {
            var body = try fields.body()
            if bindPasswordStdin {
                guard let password = readSecretLine(prompt: "Service account password: ") else {
                    throw TerminalFailure("--bind-password-stdin reads the password from standard input, which holds no line")
                }
                body["bind_password"] = password
            }
            try await options.client().print("PUT", options.tenantPath("/directory"), body: body)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the directory; the users and groups it made stay and are no longer synced.")
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("DELETE", options.tenantPath("/directory")) }
    }

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Connect, bind as the service account and run the user search: how many users, and the first few.")
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("POST", options.tenantPath("/directory/test")) }
    }

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sync the directory now and print what changed; --dry-run prints what would change and writes nothing.")
        @OptionGroup var options: AdminOptions
        @Flag(name: .customLong("dry-run"), help: "Read and compare only: change nothing.") var dryRun = false
        func run() async throws {
            try await options.client().print("POST", options.tenantPath("/directory/sync"), body: dryRun ? ["dry_run": true] : nil)
        }
    }

    struct LastSync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "last-sync", abstract: "What the last sync did, or why it failed.")
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("GET", options.tenantPath("/directory/sync")) }
    }
}
