import Foundation
import PackagePlugin

/// Builds the server's text files into the server, so that the files in the repository are what
/// it serves and nothing has to be copied beside the binary:
///
/// - the OpenAPI document as the string constant `openAPIDocumentText`, assembled from its pieces
///   in the target's folder: `OpenAPI/document.json` (everything but the paths, and the components
///   more than one feature uses) and `OpenAPI/Features/*.json` (each feature's paths and the
///   schemas only it uses). A path or component defined twice, or a `$ref` to a component no
///   piece defines, fails the build;
/// - every file under `Resources/` (the pages' Mustache templates, stylesheets and scripts) as
///   `embeddedResources`, a dictionary from the path under `Resources/` (`SignIn/layout.mustache`)
///   to the file's text.
@main
struct EmbedFiles: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let tool = try context.tool(named: "EmbedText").url
        let document = target.directoryURL.appending(path: "OpenAPI/document.json")
        let features = try files(under: target.directoryURL.appending(path: "OpenAPI/Features"))
            .filter { $0.pathExtension == "json" }
        let documentSource = context.pluginWorkDirectoryURL.appending(path: "OpenAPIDocumentText.swift")
        let resources = target.directoryURL.appending(path: "Resources")
        let resourceFiles = try files(under: resources)
        let resourcesSource = context.pluginWorkDirectoryURL.appending(path: "EmbeddedResources.swift")
        return [
            .buildCommand(
                displayName: "Embedding the OpenAPI document",
                executable: tool,
                arguments: ["--openapi", document.path(percentEncoded: false), documentSource.path(percentEncoded: false), "openAPIDocumentText"]
                    + features.map { $0.path(percentEncoded: false) },
                inputFiles: [document] + features,
                outputFiles: [documentSource]),
            .buildCommand(
                displayName: "Embedding the pages' templates, stylesheets and scripts",
                executable: tool,
                arguments: ["--files", resources.path(percentEncoded: false), resourcesSource.path(percentEncoded: false), "embeddedResources"]
                    + resourceFiles.map { $0.path(percentEncoded: false) },
                inputFiles: resourceFiles,
                outputFiles: [resourcesSource]),
        ]
    }

    /// The regular files under `folder`, in a stable order (hidden files, such as an editor's
    /// swap files, left out).
    private func files(under folder: URL) throws -> [URL] {
        guard let walker = FileManager.default.enumerator(
            at: folder, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else { return [] }
        var found: [URL] = []
        for case let url as URL in walker where try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true {
            found.append(url)
        }
        return found.sorted { $0.path < $1.path }
    }
}
