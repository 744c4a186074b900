import ArgumentParser
import Foundation

/// `countersign admin ssf …`: the tenant's Shared Signals streams as its receivers registered
/// them, and how their Security Event Tokens fared (docs/ssf.md §6; right `webhooks:manage`).
/// Receivers manage their own streams through `/ssf/streams` with a key holding `ssf`.
struct SharedSignalsCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssf",
        abstract: "The tenant's Shared Signals streams and their SETs (webhooks:manage).",
        subcommands: [List.self, Events.self, Delete.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every stream: its receiver's key, delivery, status, events, and its SETs by state.")
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("GET", options.tenantPath("/ssf-streams")) }
    }

    struct Events: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A stream's SETs, newest first: type, status, attempts, last error (never the SET).")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The stream's id (ssf_…).") var stream: String
        @OptionGroup var page: PageOptions
        func run() async throws {
            try await options.client().print("GET", options.tenantPath("/ssf-streams/\(stream)/events") + page.query())
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a receiver's stream and the SETs it held (revoke its key too, or it may register again).")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The stream's id (ssf_…).") var stream: String
        func run() async throws { try await options.client().print("DELETE", options.tenantPath("/ssf-streams/\(stream)")) }
    }
}
