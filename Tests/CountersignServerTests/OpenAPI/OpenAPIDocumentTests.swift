import Foundation
import Testing
@testable import CountersignServer

/// The OpenAPI document is the truth about the router: every route is an operation of it and
/// every operation a route, it is valid OpenAPI 3.1, and it is what `/openapi.json` serves. (That
/// every answer the suite receives fits it is checked by `TestServer` on each answer.) It is kept
/// in pieces, `document.json` and one file per feature under `Features/`, which the build
/// assembles; each piece holds its own feature's routes and schemas.
@Suite("The OpenAPI document")
struct OpenAPIDocumentTests {
    /// The folder of the document's pieces in the repository.
    static let folder = DocumentationExamplesTests.root.appendingPathComponent("Sources/CountersignServer/OpenAPI")
    let contract = OpenAPIContract.shared

    /// The operations of the document as `METHOD /path`, the tenant's copies written with
    /// their `/t/{tenant}` base as the router has them.
    var documentedRoutes: Set<String> {
        var routes = Set<String>()
        for (path, item) in contract.document["paths"]?.object ?? [:] {
            let bases = (item["servers"]?.array ?? [.object(["url": .string("/")])]).compactMap { $0["url"]?.string }
            for method in OpenAPIContract.methods where item[method] != nil {
                for base in bases {
                    // The root below a base is the base itself: `/t/{tenant}`, not `/t/{tenant}/`.
                    let below = base == "/" ? path : path == "/" ? "" : path
                    routes.insert("\(method.uppercased()) \(base == "/" ? "" : base)\(below)")
                }
            }
        }
        return routes
    }

    @Test func everyRouteIsAnOperationOfTheDocumentAndEveryOperationARoute() async throws {
        let documented = documentedRoutes
        try await TestServer.routed { server in
            let routed = Set(server.server.routes.map { "\($0.method.rawValue) \($0.path)" })
            let undocumented = routed.subtracting(documented)
            #expect(undocumented.isEmpty, "routes the document lacks: \(undocumented.sorted())")
            let unrouted = documented.subtracting(routed)
            #expect(unrouted.isEmpty, "operations no route answers: \(unrouted.sorted())")
        }
    }

    /// A client generator names methods by operationId and groups them by tag; the console and
    /// readers find each admin operation's right in `x-countersign-right` (`none` where any key
    /// that reaches the tenant may call it).
    @Test func everyOperationIsNamedTaggedAndListsItsRefusals() throws {
        var names: [String: String] = [:]
        let tags = Set((contract.document["tags"]?.array ?? []).compactMap { $0["name"]?.string })
        for (path, item) in contract.document["paths"]?.object ?? [:] {
            for method in OpenAPIContract.methods {
                guard let operation = item[method] else { continue }
                let name = "\(method.uppercased()) \(path)"
                let id = try #require(operation["operationId"]?.string, "\(name) has no operationId")
                #expect(names[id] == nil, "\(name) repeats the operationId \(id) of \(names[id] ?? "")")
                names[id] = name
                #expect(operation["summary"]?.string?.isEmpty == false, "\(name) has no summary")
                let operationTags = operation["tags"]?.array?.compactMap(\.string) ?? []
                #expect(!operationTags.isEmpty && operationTags.allSatisfy(tags.contains), "\(name) has tags \(operationTags)")
                let statuses = operation["responses"]?.object?.keys.compactMap { Int($0) } ?? []
                #expect(statuses.contains { (200..<400).contains($0) }, "\(name) lists no success")
                if path.hasPrefix("/admin/") {
                    #expect(operation["x-countersign-right"]?.string != nil, "\(name) names no right")
                    #expect(operation["security"] != nil, "\(name) names no security")
                    #expect(statuses.contains(401) && statuses.contains(403), "\(name) lists no 401 or 403")
                }
            }
        }
    }

    @Test func theServerServesTheAssembledDocumentWithAValidator() async throws {
        try await TestServer.routed { server in
            let answer = try await server.call("GET", "/openapi.json")
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "application/json")
            #expect(answer.data == Data(openAPIDocumentText.utf8))
            let tag = try #require(answer.header("ETag"))
            let again = try await server.call("GET", "/openapi.json", headers: ["If-None-Match": tag])
            #expect(again.status == 304 && again.data.isEmpty)
            let changed = try await server.call("GET", "/openapi.json", headers: ["If-None-Match": "\"other\""])
            #expect(changed.status == 200)
        }
    }

    /// The build assembled the pieces as they are in the repository now (a test binary built
    /// before a piece changed would hold the server to an old document).
    @Test func theBuiltDocumentIsThePiecesAsTheyAreNow() throws {
        let pieces = try Self.pieces()
        var document = try #require(pieces[0].value.object, "document.json is not a JSON object")
        var paths = document["paths"]?.object ?? [:]
        var components = (document["components"]?.object ?? [:]).mapValues { $0.object ?? [:] }
        for piece in pieces.dropFirst() {
            paths.merge(piece.value["paths"]?.object ?? [:]) { first, _ in first }
            for (kind, members) in piece.value["components"]?.object ?? [:] {
                components[kind, default: [:]].merge(members.object ?? [:]) { first, _ in first }
            }
        }
        document["paths"] = .object(paths)
        document["components"] = .object(components.mapValues(SchemaValue.object))
        #expect(SchemaValue.object(document) == contract.document, "the built document is not the pieces' assembly; rebuild")
    }

    /// A route is documented in the piece of its feature: every operation of a piece has the
    /// piece's tag first (`Features/push-credentials.json` holds the `Push credentials`
    /// operations), and `document.json` documents no route.
    @Test func eachFeaturePieceDocumentsOnlyTheOperationsOfItsTag() throws {
        let pieces = try Self.pieces()
        #expect(pieces[0].value["paths"] == nil, "document.json documents paths; they belong in a feature's piece")
        let tags = (pieces[0].value["tags"]?.array ?? []).compactMap { $0["name"]?.string }
        for piece in pieces.dropFirst() {
            let tag = try #require(tags.first { "Features/\(Self.fileName(of: $0))" == piece.name },
                                   "\(piece.name) is not named after a tag of document.json")
            for (path, item) in piece.value["paths"]?.object ?? [:] {
                for method in OpenAPIContract.methods {
                    guard let operation = item[method] else { continue }
                    let first = operation["tags"]?.array?.first?.string
                    #expect(first == tag, "\(method.uppercased()) \(path) is tagged \(first ?? "nothing") but documented in \(piece.name)")
                }
            }
        }
    }

    /// A component that more than one piece uses lives in `document.json`: nothing a feature's
    /// piece defines is referred to from another piece.
    @Test func noPieceRefersToAComponentOfAnotherFeature() throws {
        let pieces = try Self.pieces()
        var definedIn: [String: String] = [:]
        for piece in pieces.dropFirst() {
            for (kind, members) in piece.value["components"]?.object ?? [:] {
                for name in (members.object ?? [:]).keys { definedIn["#/components/\(kind)/\(name)"] = piece.name }
            }
        }
        for piece in pieces {
            for reference in Self.references(in: piece.value) {
                guard let owner = definedIn[reference], owner != piece.name else { continue }
                Issue.record("\(piece.name) refers to \(reference), which \(owner) defines; move it to document.json")
            }
        }
    }

    /// The document's pieces as they are in the repository: `document.json` first, then the
    /// feature pieces (`Features/users.json`) in the order of their names.
    static func pieces() throws -> [(name: String, value: SchemaValue)] {
        let features = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("Features").path)
            .filter { $0.hasSuffix(".json") }.sorted().map { "Features/\($0)" }
        return try (["document.json"] + features).map { name in
            (name, try SchemaValue.parse(Data(contentsOf: folder.appendingPathComponent(name))))
        }
    }

    /// The file of a tag's piece: its name in lower case, words joined by `-` (`admin-keys.json`).
    static func fileName(of tag: String) -> String {
        tag.lowercased().replacingOccurrences(of: " ", with: "-") + ".json"
    }

    /// Every `$ref` under `value`.
    static func references(in value: SchemaValue) -> Set<String> {
        switch value {
        case .object(let members):
            var found = members.values.reduce(into: Set<String>()) { $0.formUnion(references(in: $1)) }
            if let reference = members["$ref"]?.string { found.insert(reference) }
            return found
        case .array(let elements):
            return elements.reduce(into: Set<String>()) { $0.formUnion(references(in: $1)) }
        default:
            return []
        }
    }

    /// openapi-spec-validator (Python) checks the document against the OpenAPI 3.1 schema, an
    /// independent reading of the specification.
    @Test(.enabled(if: Self.specValidator != nil, "python3 with openapi-spec-validator is not available"))
    func theDocumentIsValidOpenAPI31() async throws {
        let python = try #require(Self.specValidator)
        let result = try await ChildProcess.result(python, ["python3", "-c", """
            import json, sys
            from openapi_spec_validator import validate
            from openapi_spec_validator.validation.exceptions import OpenAPIValidationError
            document = json.loads(sys.stdin.buffer.read())
            try:
                validate(document)
            except OpenAPIValidationError as e:
                print(e)
                sys.exit(1)
            """], input: openAPIDocumentText)
        #expect(result.status == 0, "\(result.output)")
    }

    static let specValidator: URL? = {
        let python = URL(fileURLWithPath: "/usr/bin/env")
        guard (try? ChildProcess.runBlocking(python, ["python3", "-c", "import openapi_spec_validator"])) != nil else {
            FileHandle.standardError.write(Data("OpenAPIDocumentTests: SKIPPED: python3 with openapi-spec-validator is not available\n".utf8))
            return nil
        }
        return python
    }()

    @Test func everyLocalReferenceResolves() throws {
        var unresolved: [String] = []
        func walk(_ value: SchemaValue, _ path: String) {
            switch value {
            case .object(let members):
                if let reference = members["$ref"]?.string,
                   contract.validator.failures(of: .null, against: .object(["$ref": .string(reference)]))
                    .contains(where: { $0.contains("unresolvable") }) {
                    unresolved.append("\(path): \(reference)")
                }
                for (key, member) in members { walk(member, "\(path)/\(key)") }
            case .array(let elements):
                for (index, element) in elements.enumerated() { walk(element, "\(path)/\(index)") }
            default: break
            }
        }
        walk(contract.document, "#")
        #expect(unresolved.isEmpty, "\(unresolved)")
    }
}
