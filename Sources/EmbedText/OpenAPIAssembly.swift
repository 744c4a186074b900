import Foundation

// The served OpenAPI document is kept in pieces: `document.json` (the version, the info, the
// servers, the tags and the components more than one feature uses) and one file per feature
// under `Features/` (its paths and the schemas only it uses). Assembling them is a merge of
// `paths` and of each map under `components` in which a name may be defined once only, so that
// two pieces cannot quietly describe the same route or schema twice, one of them lost; and every
// `$ref` must name a component some piece defines, so that a schema moved to the wrong piece, or
// deleted while still in use, stops the build instead of reaching clients as a broken document.

/// A JSON object read from one piece, with the file it came from for the build's messages.
struct OpenAPIPiece {
    let file: String
    let members: [String: Any]

    init(file: String) {
        self.file = file
        let text = read(file)
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(text.utf8))
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            fail("\(file) is not JSON: \(detail)", status: 65)
        }
        guard let members = parsed as? [String: Any] else { fail("\(file) is not a JSON object", status: 65) }
        self.members = members
    }

    /// The map at `key` (nil when absent): `paths`, `components` or one of the components' maps.
    func map(_ key: String, in object: [String: Any]? = nil, named name: String? = nil) -> [String: Any]? {
        guard let value = (object ?? members)[key] else { return nil }
        guard let map = value as? [String: Any] else { fail("\(file): \(name ?? key) is not a JSON object", status: 65) }
        return map
    }
}

/// The document assembled from `head` (`document.json`) and the feature pieces, as
/// deterministic JSON text (keys sorted, so the same pieces always give the same bytes).
/// Exits with a message naming the files when a path or component is defined twice or a
/// `$ref` names no component.
func assembleOpenAPIDocument(head headFile: String, features featureFiles: [String]) -> String {
    let head = OpenAPIPiece(file: headFile)
    let features = featureFiles.map(OpenAPIPiece.init(file:))
    var problems: [String] = []

    // A feature piece adds paths and components and nothing else: any other member would be
    // dropped from the served document without a word.
    for feature in features {
        for key in feature.members.keys.sorted() where key != "paths" && key != "components" {
            problems.append("\(feature.file): a feature piece holds only `paths` and `components`, not `\(key)`; the rest of the document lives in \(headFile)")
        }
    }

    var paths: [String: Any] = [:]
    var pathDefinedIn: [String: String] = [:]
    var components: [String: [String: Any]] = [:]
    var componentDefinedIn: [String: String] = [:]
    for piece in [head] + features {
        for (path, item) in (piece.map("paths") ?? [:]).sorted(by: { $0.key < $1.key }) {
            if let earlier = pathDefinedIn[path] {
                problems.append("path \(path) is defined twice: in \(earlier) and in \(piece.file)")
                continue
            }
            pathDefinedIn[path] = piece.file
            paths[path] = item
        }
        let pieceComponents = piece.map("components") ?? [:]
        for kind in pieceComponents.keys.sorted() {
            let members = piece.map(kind, in: pieceComponents, named: "components.\(kind)") ?? [:]
            for (name, value) in members.sorted(by: { $0.key < $1.key }) {
                if let earlier = componentDefinedIn["\(kind)/\(name)"] {
                    problems.append("component \(kind)/\(name) is defined twice: in \(earlier) and in \(piece.file)")
                    continue
                }
                componentDefinedIn["\(kind)/\(name)"] = piece.file
                components[kind, default: [:]][name] = value
            }
        }
    }

    for piece in [head] + features {
        for (location, target) in references(in: piece.members, at: "") {
            if let problem = problem(with: target, in: components) {
                problems.append("\(piece.file): \(location) \"\(target)\" \(problem)")
            }
        }
    }
    if !problems.isEmpty { fail(problems.joined(separator: "\nEmbedText: "), status: 65) }

    var document = head.members
    document["paths"] = paths
    document["components"] = components
    do {
        let data = try JSONSerialization.data(
            withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    } catch {
        fail("cannot write the assembled OpenAPI document as JSON: \(error.localizedDescription)", status: 70)
    }
}

/// Every `$ref` under `value` with where it stands (`paths["/jwks"].get.responses["200"].$ref`),
/// in a stable order so the build's messages do not change from one run to the next.
private func references(in value: Any, at location: String) -> [(location: String, target: String)] {
    switch value {
    case let object as [String: Any]:
        var found: [(location: String, target: String)] = []
        for (key, member) in object.sorted(by: { $0.key < $1.key }) {
            let here = location.isEmpty ? key : location + accessor(key)
            if key == "$ref", let target = member as? String {
                found.append((here, target))
            } else {
                found += references(in: member, at: here)
            }
        }
        return found
    case let array as [Any]:
        return array.enumerated().flatMap { references(in: $1, at: "\(location)[\($0)]") }
    default:
        return []
    }
}

/// `.name` for a member whose name reads as an identifier, else `["name"]`.
private func accessor(_ key: String) -> String {
    let identifier = !key.isEmpty && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_$-".contains($0)) }
        && !(key.first?.isNumber ?? true)
    return identifier ? ".\(key)" : "[\"\(key)\"]"
}

/// What is wrong with the reference `target`, or nil when it is `#/components/<kind>/<name>`
/// (possibly pointing further inside that component) and the assembled components define that
/// name. A reference anywhere else is refused too: only components are shared between the pieces.
private func problem(with target: String, in components: [String: [String: Any]]) -> String? {
    let prefix = "#/components/"
    // JSON Pointer (RFC 6901): `~1` stands for `/`, `~0` for `~`.
    let segments = target.hasPrefix(prefix)
        ? target.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~") }
        : []
    guard segments.count >= 2 else { return "is not a reference to a component (#/components/<kind>/<name>)" }
    return components[segments[0]]?[segments[1]] == nil ? "names a component no piece defines" : nil
}
