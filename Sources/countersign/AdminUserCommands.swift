import ArgumentParser
import CountersignCommandLine
import CountersignServer
import Foundation

struct UserCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Users of the tenant.",
        subcommands: [List.self, Create.self, Show.self, Update.self, Delete.self, ResetFactors.self, ConsoleRole.self,
                      Groups.self])

    struct List: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @OptionGroup var page: PageOptions
        @Option(help: "Only users whose username starts with this (any case).") var search: String?
        func run() async throws {
            try await options.client().print("GET", options.tenantPath("/users") + page.query(("q", search)))
        }
    }

    /// Who may sign in to the console at /console (or /t/<slug>/console).
    struct ConsoleRole: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "console-role",
            abstract: "Show, grant (--set tenant-admin|system-admin) or take away (--remove) a user's console role.")
        @OptionGroup var options: AdminOptions
        @Argument var userID: String
        @Option(help: "tenant-admin (every right in the tenant but tenants:manage) or system-admin (every right; default tenant only).")
        var set: String?
        @Flag(help: "Take the role away.") var remove = false
        func validate() throws {
            if set != nil && remove { throw ValidationError("--set and --remove cannot be used together") }
        }
        func run() async throws {
            let path = options.tenantPath("/users/\(userID)/console-role")
            if let set {
                try await options.client().print("PUT", path, body: ["role": set])
            } else if remove {
                try await options.client().print("DELETE", path)
            } else {
                try await options.client().print("GET", path)
            }
        }
    }

    struct Create: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var username: String
        @Option(name: .customLong("display-name")) var displayName: String?
        @Option(help: "The user's e-mail address, where invitations and warnings are mailed (docs/mail.md).")
        var email: String?
        func run() async throws {
            var body: [String: Any] = ["username": username]
            if let displayName { body["display_name"] = displayName }
            if let email { body["email"] = email }
            try await options.client().print("POST", options.tenantPath("/users"), body: body)
        }
    }

    struct Show: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var userID: String
        func run() async throws { try await options.client().print("GET", options.tenantPath("/users/\(userID)")) }
    }

    struct Update: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var userID: String
        @Option var username: String?
        @Option(name: .customLong("display-name")) var displayName: String?
        @Option(help: "active or disabled.") var status: String?
        @Option(name: .customLong("user-code"), help: "The user's user_code (empty: remove it). Never shown back.")
        var userCode: String?
        @Option(help: "The user's e-mail address (empty: remove it).") var email: String?
        func run() async throws {
            var body: [String: Any] = [:]
            if let email { body["email"] = email }
            if let username { body["username"] = username }
            if let displayName { body["display_name"] = displayName }
            if let status { body["status"] = status }
            if let userCode { body["user_code"] = userCode }
            try await options.client().print("PATCH", options.tenantPath("/users/\(userID)"), body: body)
        }
    }

    struct Groups: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The groups the user is in, by name.")
        @OptionGroup var options: AdminOptions
        @Argument var userID: String
        func run() async throws { try await options.client().print("GET", options.tenantPath("/users/\(userID)/groups")) }
    }

    struct ResetFactors: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-factors",
            abstract: "Deregister every device and remove every passkey of the user, so they enroll again.")
        @OptionGroup var options: AdminOptions
        @Argument var userID: String
        func run() async throws {
            try await options.client().print("POST", options.tenantPath("/users/\(userID)/factor-reset"))
        }
    }

    struct Delete: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var userID: String
        func run() async throws { try await options.client().print("DELETE", options.tenantPath("/users/\(userID)")) }
    }
}

/// Creates an enrollment ticket and shows its URI as a QR code in the terminal.
struct EnrollCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enroll", abstract: "Create an enrollment ticket for a user and show it as a QR code.")

    @OptionGroup var options: AdminOptions
    @Argument var userID: String
    @Option(name: .customLong("lifetime"), help: "Seconds the ticket stays valid, 60 to 86400. Default 600.") var lifetime: Int?
    @Option(help: "Also write the QR code as PNG to this file.") var png: String?
    @Option(help: "Also write the QR code as SVG to this file.") var svg: String?
    @Flag(help: "Print only the enrollment URI.") var uriOnly = false
    @Flag(name: .customLong("invitation-only"),
          help: "Print only the invitation link: a page with the QR code, for the person to open in a browser.")
    var invitationOnly = false
    @Flag(name: .customLong("email"),
          help: "Also mail the invitation link to the user's e-mail address (needs the tenant's mail settings).")
    var email = false

    func run() async throws {
        var body: [String: Any] = [:]
        if let lifetime { body["lifetime_seconds"] = lifetime }
        if email { body["send_email"] = true }
        let answer = try await options.client().send("POST", options.tenantPath("/users/\(userID)/enrollment-tickets"), body: body)
        guard let object = answer as? [String: Any], let uri = object["enrollment_uri"] as? String else {
            throw AdminAPIClient.Failure(description: "the server's answer has no enrollment_uri")
        }
        if let png, let encoded = object["qr_png_base64"] as? String, let data = Data(base64Encoded: encoded) {
            try data.write(to: URL(fileURLWithPath: png))
        }
        if let svg, let text = object["qr_svg"] as? String {
            try Data(text.utf8).write(to: URL(fileURLWithPath: svg))
        }
        let invitation = object["invitation_url"] as? String
        if uriOnly || invitationOnly {
            print(uriOnly ? uri : invitation ?? "")
            return
        }
        let expires = (object["ticket"] as? [String: Any])?["expires_at"] as? String ?? "?"
        print(try QRCode(encoding: uri).terminalText())
        print("Scan with the Countersign app, or run: countersign device enroll '\(uri)'")
        if let invitation { print("Or send the person this invitation link, which shows the QR code: \(invitation)") }
        if let mailID = object["mail_id"] as? String {
            print("The link is mailed to the user (\(mailID)); `countersign admin mail deliveries` shows when it is sent.")
        }
        print("The ticket is single-use and expires at \(expires).")
    }
}

struct TicketCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ticket", abstract: "A user's enrollment tickets (create them with `admin enroll`).",
        subcommands: [List.self, Revoke.self])

    struct List: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @OptionGroup var page: PageOptions
        @Argument var userID: String
        func run() async throws {
            try await options.client().print("GET", options.tenantPath("/users/\(userID)/enrollment-tickets") + page.query())
        }
    }

    struct Revoke: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var userID: String
        @Argument var ticketID: String
        func run() async throws {
            try await options.client().print("DELETE", options.tenantPath("/users/\(userID)/enrollment-tickets/\(ticketID)"))
        }
    }
}

struct DeviceAdminCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Devices of the tenant's users.",
        subcommands: [List.self, Show.self, Delete.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A user's devices, or without a user every active device of the tenant.")
        @OptionGroup var options: AdminOptions
        @OptionGroup var page: PageOptions
        @Argument(help: "The user's id; leave it out for the whole tenant.") var userID: String?
        @Option(help: "Tenant-wide only: valid (push works), invalid (refused by APNs or FCM) or none (no push).")
        var push: String?
        func run() async throws {
            guard let userID else {
                try await options.client().print("GET", options.tenantPath("/devices") + page.query(("push", push)))
                return
            }
            guard push == nil else { throw ValidationError("--push lists the whole tenant: leave out the user") }
            try await options.client().print("GET", options.tenantPath("/users/\(userID)/devices") + page.query())
        }
    }

    struct Show: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var deviceID: String
        func run() async throws { try await options.client().print("GET", options.tenantPath("/devices/\(deviceID)")) }
    }

    struct Delete: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var deviceID: String
        func run() async throws { try await options.client().print("DELETE", options.tenantPath("/devices/\(deviceID)")) }
    }
}

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "audit", abstract: "The audit log, newest first.")

    @OptionGroup var options: AdminOptions
    @OptionGroup var page: PageOptions
    @Flag(help: "Every tenant's events (system keys).") var all = false
    @Option(help: "Only the events of this action, such as risk.rule_fired.") var action: String?

    func run() async throws {
        let path = all ? "/admin/v1/audit" : options.tenantPath("/audit")
        try await options.client().print("GET", path + page.query(("action", action)))
    }
}

/// A user's recovery codes, as an administrator sees them: how many are left, never the codes.
struct RecoveryCodeCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery-codes",
        abstract: "Whether a user has recovery codes and how many are left (--revoke: delete them).")
    @OptionGroup var options: AdminOptions
    @Argument var userID: String
    @Flag(help: "Delete the user's recovery codes, used or not, and end any session one of them opened.") var revoke = false
    func run() async throws {
        try await options.client().print(revoke ? "DELETE" : "GET", options.tenantPath("/users/\(userID)/recovery-codes"))
    }
}

/// A user's remembered browsers: the browsers that sign them in without a push, listed, or one
/// forgotten (docs/recovery.md §9).
struct RememberedBrowserCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remembered-browsers",
        abstract: "A user's remembered browsers (--forget <id>: forget one; its next sign-in asks the phone).")
    @OptionGroup var options: AdminOptions
    @Argument var userID: String
    @Option(help: "The remembered browser (rbr_…) to forget.") var forget: String?
    func run() async throws {
        let path = options.tenantPath("/users/\(userID)/remembered-browsers")
        if let forget {
            try await options.client().print("DELETE", path + "/" + forget)
        } else {
            try await options.client().print("GET", path)
        }
    }
}

/// Temporary access passes: a code an administrator gives a user who lost their phone, to sign
/// in at /account/recover and enroll a new one.
struct AccessPassCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "access-pass", abstract: "A user's temporary access passes.", subcommands: [Issue.self, List.self, Revoke.self])

    struct Issue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a pass and print it (shown this once), for the user to type at /account/recover.")
        @OptionGroup var options: AdminOptions
        @Argument var userID: String
        @Option(help: "Seconds the pass works, 3600 (1 hour) to 2592000 (30 days). Default 3600.") var lifetime: Int?
        @Option(name: .customLong("starts-at"), help: "When it starts to work (RFC 3339, at most 30 days ahead). Default now.")
        var startsAt: String?
        @Flag(inversion: .prefixedNo, help: "Whether one sign-in uses it up. Default: one-time.") var oneTime = true
        @Option(name: .customLong("allowed-network"), help: "A network (CIDR) it may be used from; repeat for more. Default anywhere.")
        var allowedNetworks: [String] = []
        @Flag(name: .customLong("json"), help: "Print the server's answer as JSON.") var json = false
        func run() async throws {
            var body: [String: Any] = ["one_time": oneTime]
            if let lifetime { body["lifetime_seconds"] = lifetime }
            if let startsAt { body["starts_at"] = startsAt }
            if !allowedNetworks.isEmpty { body["allowed_networks"] = allowedNetworks }
            let path = options.tenantPath("/users/\(userID)/temporary-access-passes")
            if json {
                try await options.client().print("POST", path, body: body)
                return
            }
            let answer = try await options.client().send("POST", path, body: body)
            guard let object = answer as? [String: Any], let code = object["code"] as? String,
                  let pass = object["pass"] as? [String: Any] else {
                throw AdminAPIClient.Failure(description: "the server's answer has no code")
            }
            print(code)
            let uses = (pass["one_time"] as? Bool) == false ? "any number of times" : "once"
            let server = (setting(options.server, "COUNTERSIGN_SERVER") ?? "http://localhost:8080").trimmingCharacters(in: ["/"])
            let base = options.tenantSlug == "default" ? server : server + "/t/" + options.tenantSlug
            print("Pass \(pass["id"] as? String ?? "?"): works \(uses) from \(pass["starts_at"] as? String ?? "?") to \(pass["expires_at"] as? String ?? "?"), at \(base)/account/recover. It is shown only this once.")
        }
    }

    struct List: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var userID: String
        func run() async throws {
            try await options.client().print("GET", options.tenantPath("/users/\(userID)/temporary-access-passes"))
        }
    }

    struct Revoke: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var userID: String
        @Argument var passID: String
        func run() async throws {
            try await options.client().print("DELETE", options.tenantPath("/users/\(userID)/temporary-access-passes/\(passID)"))
        }
    }
}
