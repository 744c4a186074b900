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
        func run() async throws {
            var body: [String: Any] = ["username": username]
            if let displayName { body["display_name"] = displayName }
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
        func run() async throws {
            var body: [String: Any] = [:]
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

    func run() async throws {
        var body: [String: Any] = [:]
        if let lifetime { body["lifetime_seconds"] = lifetime }
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

    func run() async throws {
        let path = all ? "/admin/v1/audit" : options.tenantPath("/audit")
        try await options.client().print("GET", path + page.query())
    }
}
