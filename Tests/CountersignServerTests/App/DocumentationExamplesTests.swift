import Foundation
import Testing

/// Every Swift block in the README and `docs/` is type-checked against the modules this build
/// made, so that an example cannot name an API that no longer exists.
///
/// A block is the body of an `async throws` function. The names it uses without defining them
/// are declared by an HTML comment right above its fence, which Markdown does not show:
///
///     <!-- swift-example: scanned: String, url: URL -->
///
/// `<!-- swift-example: apple-only -->` (or `apple-only; name: Type, …`) marks a block that uses
/// UIKit or UserNotifications: it is type-checked only where those exist, and reported as
/// skipped here; `Scripts/build-ios` compiles these for iOS.
@Suite("Swift examples in the documentation")
struct DocumentationExamplesTests {
    struct Example: CustomTestStringConvertible, Sendable {
        let file: String
        let line: Int
        let parameters: String
        let appleOnly: Bool
        let code: String

        var testDescription: String { "\(file):\(line)" }
    }

    static let root = BuildProducts.packageRoot

    /// The Swift blocks of README.md and docs/*.md, in order.
    static let examples: [Example] = {
        let manager = FileManager.default
        let docs = ((try? manager.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? [])
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        return (["README.md"] + docs).flatMap { file -> [Example] in
            guard let text = try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8) else { return [] }
            return blocks(in: text, file: file)
        }
    }()

    static func blocks(in text: String, file: String) -> [Example] {
        let lines = text.components(separatedBy: "\n")
        var examples: [Example] = []
        var index = 0
        while index < lines.count {
            guard lines[index].trimmingCharacters(in: .whitespaces) == "```swift" else {
                index += 1
                continue
            }
            let start = index
            let marker = (lines[..<start].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? "")
                .trimmingCharacters(in: .whitespaces)
            var declared = ""
            if marker.hasPrefix("<!-- swift-example:"), marker.hasSuffix("-->") {
                declared = String(marker.dropFirst("<!-- swift-example:".count).dropLast(3)).trimmingCharacters(in: .whitespaces)
            }
            index += 1
            var body: [String] = []
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
                body.append(lines[index])
                index += 1
            }
            index += 1
            let appleOnly = declared == "apple-only" || declared.hasPrefix("apple-only;")
            let parameters = appleOnly ? String(declared.dropFirst("apple-only".count).drop { $0 == ";" || $0 == " " }) : declared
            examples.append(Example(file: file, line: start + 1, parameters: parameters, appleOnly: appleOnly,
                                    code: body.joined(separator: "\n")))
        }
        return examples
    }

    /// The compiler and the flags that let it see this build's modules, or nil when the build
    /// products are not where `swift build` puts them.
    static let compiler: (swiftc: URL, flags: [String])? = {
        let manager = FileManager.default
        guard let build = BuildProducts.directory,
              manager.fileExists(atPath: build.appendingPathComponent("Modules/CountersignKit.swiftmodule").path)
        else {
            FileHandle.standardError.write(Data("note: the build's Modules directory is missing; the documentation examples are SKIPPED\n".utf8))
            return nil
        }
        let modules = build.appendingPathComponent("Modules")
        guard let swiftc = ChildProcess.find("swiftc") else {
            FileHandle.standardError.write(Data("note: swiftc is not on PATH; the documentation examples are SKIPPED\n".utf8))
            return nil
        }
        var flags = ["-typecheck", "-I", modules.path]
        // The C modules of the dependencies (BoringSSL, the atomics and numerics shims, …).
        let checkouts = root.appendingPathComponent(".build/checkouts")
        let moduleMaps = (manager.enumerator(atPath: checkouts.path)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix("/module.modulemap") && $0.contains("/Sources/") }
        for map in moduleMaps.sorted() {
            let file = checkouts.appendingPathComponent(map)
            flags += ["-Xcc", "-fmodule-map-file=\(file.path)", "-Xcc", "-I\(file.deletingLastPathComponent().path)"]
        }
        // …this package's system libraries (CLDAP, which the server's directory client imports)…
        let sources = root.appendingPathComponent("Sources")
        for target in ((try? manager.contentsOfDirectory(atPath: sources.path)) ?? []).sorted() {
            let file = sources.appendingPathComponent(target).appendingPathComponent("module.modulemap")
            guard manager.fileExists(atPath: file.path) else { continue }
            flags += ["-Xcc", "-fmodule-map-file=\(file.path)", "-Xcc", "-I\(file.deletingLastPathComponent().path)"]
        }
        // …and those the build wrote for C targets that have none of their own.
        let generated = ((try? manager.contentsOfDirectory(atPath: build.path)) ?? []).filter { $0.hasSuffix(".build") }
            .map { build.appendingPathComponent($0).appendingPathComponent("module.modulemap") }
            .filter { manager.fileExists(atPath: $0.path) }
        for file in generated.sorted(by: { $0.path < $1.path }) {
            flags += ["-Xcc", "-fmodule-map-file=\(file.path)"]
        }
        return (swiftc, flags)
    }()

    @Test("the documentation has Swift examples to check")
    func examplesAreFound() {
        #expect(Self.examples.count >= 5)
        #expect(Self.examples.contains { $0.file == "README.md" })
    }

    @Test("each Swift example type-checks against this build", arguments: examples)
    func exampleTypeChecks(_ example: Example) async throws {
        #if !canImport(UIKit)
        if example.appleOnly {
            FileHandle.standardError.write(Data("note: \(example.file):\(example.line) uses Apple-only frameworks; SKIPPED here\n".utf8))
            return
        }
        #endif
        guard let (swiftc, flags) = Self.compiler else {
            #expect(ProcessInfo.processInfo.environment["CI"] != "true", "CI must check the documentation examples")
            return
        }
        let lines = example.code.components(separatedBy: "\n")
        let imports = Set(lines.filter { $0.hasPrefix("import ") }.map { $0.trimmingCharacters(in: .whitespaces) })
            .union(["import CountersignCore", "import CountersignKit", "import Foundation"])
        let body = lines.filter { !$0.hasPrefix("import ") }.joined(separator: "\n")
        let source = imports.sorted().joined(separator: "\n") + """

            func example(\(example.parameters)) async throws {
            \(body)
            }

            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-example-\(UUID().uuidString).swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let checked = try await ChildProcess.result(swiftc, flags + [file.path])
        #expect(checked.status == 0, "\(example.file):\(example.line) does not compile:\n\(source)\n\(checked.output)")
    }
}
