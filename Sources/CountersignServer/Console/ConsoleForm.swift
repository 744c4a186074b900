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
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maximumSize)
        } catch .tooLarge {
            throw FormError.tooLarge(maximumSize)
        } catch .unreadable {
            throw FormError.unreadable
        } catch .unsupportedTransferCoding {
            throw FormError.unsupportedTransferCoding
        }
        return try ConsoleForm(multipart: buffer, boundary: boundary)
    }

    /// Parses a `multipart/form-data` body (RFC 7578) with MultipartKit's parser.
    init(multipart body: ByteBuffer, boundary: String) throws {
        var parts: [(headers: [(String, String)], body: ByteBuffer)] = []
        var headers: [(String, String)] = []
        var content = ByteBuffer()
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
