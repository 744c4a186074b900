import Foundation
import Testing
@testable import CountersignServer

/// The OpenAPI document as the tests hold the server to it: every answer a test receives
/// through `TestServer` must have a status its operation lists and, when the listed media type
/// is JSON, a body its schema accepts. A failure is recorded on the test that received it.
struct OpenAPIContract: Sendable {
    /// The document the server serves.
    static let shared = OpenAPIContract(text: openAPIDocumentText)

    let document: SchemaValue
    let validator: JSONSchemaValidator
    /// The paths with their templates split into segments, literal segments first in the order
    /// the router prefers them.
    private let templates: [(template: String, segments: [Substring], underTenant: Bool)]

    init(text: String) {
        do {
            document = try SchemaValue.parse(Data(text.utf8))
        } catch {
            preconditionFailure("the OpenAPI document is not JSON: \(error)")
        }
        validator = JSONSchemaValidator(root: document)
        templates = (document["paths"]?.object ?? [:]).map { template, item in
            let underTenant = item["servers"]?.array?.contains { $0["url"]?.string?.hasPrefix("/t/") == true } ?? false
            return (template, template.split(separator: "/", omittingEmptySubsequences: false), underTenant)
        }
    }

    /// The methods the document lists, lowercased as OpenAPI writes them.
    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// The document's template for a request path (no query), with the tenant's base removed
    /// when the path is below `/t/{tenant}`; nil when no path of the document matches.
    func template(for path: String) -> String? {
        if let found = match(path, tenantOnly: false) { return found }
        let parts = path.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, parts[1] == "t", let rest = parts.last else { return nil }
        return match("/" + rest.split(separator: "/", maxSplits: 1).dropFirst().joined(), tenantOnly: true)
    }

    private func match(_ path: String, tenantOnly: Bool) -> String? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var best: (template: String, literals: Int)?
        for entry in templates where entry.segments.count == segments.count && (!tenantOnly || entry.underTenant) {
            var literals = 0
            let fits = zip(entry.segments, segments).allSatisfy { pattern, segment in
                if pattern.hasPrefix("{") && pattern.hasSuffix("}") { return !segment.isEmpty }
                literals += 1
                return pattern == segment
            }
            if fits, literals > (best?.literals ?? -1) { best = (entry.template, literals) }
        }
        return best?.template
    }

    /// What is wrong with an answer to `method path` (path with or without a query), by the
    /// document; empty when it conforms or when no operation of the document is at that path
    /// (a test of an unknown path gets the router's 404).
    func problems(method: String, path: String, status: Int, contentType: String?, body: Data) -> [String] {
        let bare = String(path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        guard let template = template(for: bare),
              let operation = document["paths"]?[template]?[method.lowercased()] else { return [] }
        let name = "\(method) \(template) → \(status)"
        let responses = operation["responses"]?.object ?? [:]
        let range = "\(status / 100)XX"
        guard var response = responses[String(status)] ?? responses[range] ?? responses["default"] else {
            return ["\(name): the document lists no such status (it lists \(responses.keys.sorted().joined(separator: ", ")))"]
        }
        if let reference = response["$ref"]?.string {
            guard let resolved = resolve(reference) else { return ["\(name): unresolvable \(reference)"] }
            response = resolved
        }
        guard let content = response["content"]?.object, !content.isEmpty else {
            return body.isEmpty || status == 304 ? [] : ["\(name): the document lists no body, the answer has \(body.count) bytes"]
        }
        guard !body.isEmpty else { return [] }
        let mediaType = (contentType ?? "").split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        } ?? ""
        guard let entry = content[mediaType] ?? content[mediaType.split(separator: "/").first.map { "\($0)/*" } ?? ""]
            ?? content["*/*"] else {
            return ["\(name): the answer is \(mediaType), the document lists \(content.keys.sorted().joined(separator: ", "))"]
        }
        guard mediaType == "application/json" || mediaType.hasSuffix("+json"), let schema = entry["schema"] else { return [] }
        let instance: SchemaValue
        do {
            instance = try SchemaValue.parse(body)
        } catch {
            return ["\(name): the body is not JSON"]
        }
        return validator.failures(of: instance, against: schema).map { "\(name): \($0)" }
    }

    private func resolve(_ reference: String) -> SchemaValue? {
        guard reference.hasPrefix("#/") else { return nil }
        var node = document
        for part in reference.dropFirst(2).split(separator: "/") {
            guard let next = node[String(part).replacingOccurrences(of: "~1", with: "/")] else { return nil }
            node = next
        }
        return node
    }

    /// Records every problem of an answer on the running test.
    func check(method: String, path: String, status: Int, headers: [String: String], body: Data,
               sourceLocation: SourceLocation = #_sourceLocation) {
        let contentType = headers.first { $0.key.lowercased() == "content-type" }?.value
        for problem in problems(method: method, path: path, status: status, contentType: contentType, body: body) {
            Issue.record("OpenAPI: \(problem)", sourceLocation: sourceLocation)
        }
    }
}
