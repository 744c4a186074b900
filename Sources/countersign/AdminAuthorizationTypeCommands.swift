import ArgumentParser
import CountersignCommandLine
import Foundation

/// `countersign admin authorization-types …`: the tenant's registry of RFC 9396 authorization
/// detail types (docs/api.md, docs/ciba.md).
struct AuthorizationTypeCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authorization-types",
        abstract: "The tenant's authorization detail types (keys with authentication-policy:manage).",
        subcommands: [Show.self, Set.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The registered types and their fields.")
        @OptionGroup var options: AdminOptions
        func run() async throws {
            try await options.client().print("GET", options.tenantPath("/authorization-detail-types"))
        }
    }

    /// Replaces the registry whole with a file's: {"types": {"<name>": {"fields": {…}}}}.
    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the registry with the one in a JSON file ({\"types\": {}} removes every type).")
        @OptionGroup var options: AdminOptions
        @Argument(help: "A JSON file: {\"types\": {\"payment_initiation\": {\"fields\": {…}}}}.") var file: String

        func run() async throws {
            guard let data = FileManager.default.contents(atPath: file),
                  let registry = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw AdminAPIClient.Failure(description: "\(file) is not a readable JSON object")
            }
            try await options.client().print("PUT", options.tenantPath("/authorization-detail-types"), body: registry)
        }
    }
}
