import Foundation
import PackagePlugin

/// Builds the OpenAPI document (`OpenAPI/openapi.json` in the target's folder) into the target
/// as a string constant, `openAPIDocumentText`, so that the one file in the repository is what
/// `/openapi.json` serves and nothing has to be copied beside the binary.
@main
struct EmbedOpenAPIDocument: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let input = target.directoryURL.appending(path: "OpenAPI/openapi.json")
        let output = context.pluginWorkDirectoryURL.appending(path: "OpenAPIDocumentText.swift")
        return [
            .buildCommand(
                displayName: "Embedding the OpenAPI document",
                executable: try context.tool(named: "EmbedText").url,
                arguments: [input.path(percentEncoded: false), output.path(percentEncoded: false), "openAPIDocumentText"],
                inputFiles: [input],
                outputFiles: [output])
        ]
    }
}
