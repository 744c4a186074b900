import ArgumentParser
import CountersignCommandLine
import Foundation

/// `countersign admin group …`: the tenant's groups of users and who is in them (docs/api.md
/// §23). A group kept by the directory or a SCIM client may be changed too; the command then
/// notes on standard error that the next sync may undo it.
struct GroupCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group", abstract: "Groups of the tenant's users (users:read, users:manage).",
        subcommands: [List.self, Create.self, Show.self, Rename.self, Delete.self, Members.self, AddMember.self,
                      RemoveMember.self])

    struct List: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @OptionGroup var page: PageOptions
        @Option(help: "Only groups whose name starts with this (any case).") var search: String?
        @Option(help: "Only groups kept by local, scim or directory.") var source: String?
        func run() async throws {
            try await options.client().print("GET", options.tenantPath("/groups") + page.query(("q", search), ("source", source)))
        }
    }

    struct Create: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument(help: "The group's name: 1 to 128 characters, unique in the tenant.") var name: String
        @Option(name: .customLong("external-id"), help: "A provisioning client's own id for the group.") var externalID: String?
        func run() async throws {
            var body: [String: Any] = ["name": name]
            if let externalID { body["external_id"] = externalID }
            try await options.client().print("POST", options.tenantPath("/groups"), body: body)
        }
    }

    struct Show: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var groupID: String
        func run() async throws { try await options.client().print("GET", options.tenantPath("/groups/\(groupID)")) }
    }

    struct Rename: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument var groupID: String
        @Argument(help: "The new name.") var name: String
        func run() async throws {
            try await options.client().print("PATCH", options.tenantPath("/groups/\(groupID)"), body: ["name": name])
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete the group; its users stay.")
        @OptionGroup var options: AdminOptions
        @Argument var groupID: String
        func run() async throws { try await options.client().print("DELETE", options.tenantPath("/groups/\(groupID)")) }
    }

    struct Members: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The group's members: each user's id and username.")
        @OptionGroup var options: AdminOptions
        @OptionGroup var page: PageOptions
        @Argument var groupID: String
        func run() async throws {
            try await options.client().print("GET", options.tenantPath("/groups/\(groupID)/members") + page.query())
        }
    }

    struct AddMember: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add-member", abstract: "Put a user of the tenant in the group.")
        @OptionGroup var options: AdminOptions
        @Argument var groupID: String
        @Argument var userID: String
        func run() async throws {
            try await options.client().print("PUT", options.tenantPath("/groups/\(groupID)/members/\(userID)"))
        }
    }

    struct RemoveMember: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove-member", abstract: "Take a user out of the group.")
        @OptionGroup var options: AdminOptions
        @Argument var groupID: String
        @Argument var userID: String
        func run() async throws {
            try await options.client().print("DELETE", options.tenantPath("/groups/\(groupID)/members/\(userID)"))
        }
    }
}
