import Foundation

// Writes a text file into a Swift source as one raw string literal, so that the server carries
// it in its binary: `EmbedText <input> <output.swift> <identifier>`. Used by the build plugin
// EmbedOpenAPIDocument for the OpenAPI document the server serves.
let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    FileHandle.standardError.write(Data("usage: EmbedText <input> <output.swift> <identifier>\n".utf8))
    exit(64)
}
let (input, output, identifier) = (arguments[1], arguments[2], arguments[3])
guard let data = FileManager.default.contents(atPath: input), let text = String(data: data, encoding: .utf8) else {
    FileHandle.standardError.write(Data("EmbedText: cannot read \(input) as UTF-8\n".utf8))
    exit(66)
}
// The literal is delimited by `###"""`; text holding the closing delimiter could not be embedded.
let closing = "\"\"\"###"
guard !text.contains(closing) else {
    FileHandle.standardError.write(Data("EmbedText: \(input) contains \(closing)\n".utf8))
    exit(65)
}
let source = """
    // Generated from \(URL(fileURLWithPath: input).lastPathComponent) by EmbedText at build time; edit that file instead.
    let \(identifier) = ###\"\"\"
    \(text)
    \(closing)

    """
do {
    try Data(source.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
} catch {
    FileHandle.standardError.write(Data("EmbedText: cannot write \(output): \(error)\n".utf8))
    exit(73)
}
