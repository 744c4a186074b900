import Foundation
import Hummingbird
import MultipartKit
import NIOCore

/// A console form as posted: `application/x-www-form-urlencoded`, or `multipart/form-data` where
/// it carries files (a `.p8` key, a `.p12` certificate, a service account's JSON). Either way a
/// field sent twice, a NUL or text that is not UTF-8 is refused (`FormError`) before anything
/// reads it, as for every form of the hosted pages.
struct ConsoleForm: Sendable {
    /// A file chosen in a file input: its name as the browser gave it, and its bytes.
    struct Upload: Sendable {
        let filename: String
        let data: Data
    }

    let fields: FormParameters
    /// By field name; a file input left empty is not here.
    let files: [String: Upload]

    init(fields: FormParameters, files: [String: Upload]) {
        (self.fields, self.files) = (fields, files)
    }

    /// The largest body a console form may have: a push credential's file is a few kilobytes.
    static let maximumSize = 256 * 1024

    static func read(_ request: Request) async throws -> ConsoleForm {
        let contentType = request.headers[.contentType]
        guard let boundary = multipartBoundary(contentType) else {
            return ConsoleForm(fields: try await FormParameters.read(request), files: [:])
        }
        return try ConsoleForm(multipart: try await FormParameters.body(of: request, upTo: maximumSize), boundary: boundary)
    }

    /// Parses a `multipart/form-data` body (RFC 7578) with MultipartKit's parser.
    init(multipart body: ByteBuffer, boundary: String) throws {
        var parts: [(headers: [(String, String)], body: ByteBuffer)] = []
        var headers: [(String, String)] = []
        var content = ByteBuffer()
        let bytes = Array(body.readableBytesView)
        try Self.checkHeaderNames(bytes, boundary: boundary)
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { name, value in headers.append((name, value)) }
        parser.onBody = { chunk in content.writeBuffer(&chunk) }
        parser.onPartComplete = {
            parts.append((headers, content))
            headers = []
            content = ByteBuffer()
        }
        do {
            try parser.execute(body)
        } catch {
            throw FormError.unreadable
        }
        // The parser keeps a part cut off before the closing delimiter to itself: a body without
        // one was cut off, and is refused rather than read as a form without its last fields.
        guard Self.firstIndex(of: Array("--\(boundary)--".utf8), in: bytes[...]) != nil else { throw FormError.unreadable }
        var fields: [String: String] = [:]
        var files: [String: Upload] = [:]
        var seen: Set<String> = []
        for part in parts {
            let disposition = part.headers.first { $0.0.lowercased() == "content-disposition" }?.1 ?? ""
            guard let name = Self.parameter("name", of: disposition) else { throw FormError.unreadable }
            guard seen.insert(name).inserted else { throw FormError.duplicate(name) }
            guard !name.unicodeScalars.contains("\0") else { throw FormError.nulCharacter(name) }
            let bytes = Data(part.body.readableBytesView)
            if let filename = Self.parameter("filename", of: disposition) {
                // A file input left empty is sent with an empty name and no bytes.
                if !filename.isEmpty || !bytes.isEmpty { files[name] = Upload(filename: filename, data: bytes) }
                continue
            }
            guard let text = String(validating: bytes, as: UTF8.self) else { throw FormError.malformedEncoding }
            guard !text.unicodeScalars.contains("\0") else { throw FormError.nulCharacter(name) }
            fields[name] = text
        }
        self.fields = FormParameters(fields: fields)
        self.files = files
    }

    /// Refuses a header name holding a byte above 0x7F before MultipartKit (4.7.1) sees it: its
    /// parser looks each header-name byte up in a table of 128 entries and traps on such a byte,
    /// which would let one request stop the server. Every header section starts after an
    /// occurrence of `--<boundary>` and ends at the first blank line after it, and every name
    /// starts a line of it, so checking what comes before the `:` of each of those lines covers
    /// every byte the parser can take for a name. Header values (a file's name in UTF-8) pass.
    static func checkHeaderNames(_ bytes: [UInt8], boundary: String) throws {
        let delimiter = Array("--\(boundary)".utf8)
        let blankLine: [UInt8] = [13, 10, 13, 10]
        var from = bytes.startIndex
        while let found = firstIndex(of: delimiter, in: bytes[from...]) {
            let start = found + delimiter.count
            let end = firstIndex(of: blankLine, in: bytes[start...]) ?? bytes.endIndex
            var inName = true
            for byte in bytes[start..<end] {
                if byte == 10 { inName = true } else if byte == UInt8(ascii: ":") { inName = false }
                if inName && byte > 0x7F { throw FormError.unreadable }
            }
            // A delimiter inside this section ends at the same blank line: checked already. Each
            // byte is looked at once, whatever the body holds.
            from = end
        }
    }

    private static func firstIndex(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        var index = haystack.startIndex
        while index <= haystack.endIndex - needle.count {
            if haystack[index] == first && haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    /// The boundary of a `multipart/form-data` content type; nil for any other type.
    static func multipartBoundary(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for part in parts.dropFirst() where part.lowercased().hasPrefix("boundary=") {
            var value = part.dropFirst("boundary=".count)
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            return value.isEmpty || value.count > 70 ? nil : String(value)
        }
        return nil
    }

    /// A parameter of a `Content-Disposition` header (`form-data; name="key"; filename="a.p8"`).
    /// Browsers write a quote in a name as `%22` and never escape with a backslash.
    static func parameter(_ key: String, of header: String) -> String? {
        // Split at the semicolons outside quotes: a file's name may hold one.
        var pieces: [String] = [], current = "", quoted = false
        for character in header {
            if character == "\"" { quoted.toggle() }
            if character == ";" && !quoted { pieces.append(current); current = "" } else { current.append(character) }
        }
        pieces.append(current)
        for part in pieces.dropFirst() {
            let pair = part.trimmingCharacters(in: .whitespaces)
            guard let equals = pair.firstIndex(of: "="), pair[..<equals].lowercased() == key else { continue }
            var value = pair[pair.index(after: equals)...]
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            return String(value)
        }
        return nil
    }
}
