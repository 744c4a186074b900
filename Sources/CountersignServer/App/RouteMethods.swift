import Hummingbird
import Synchronization

/// The methods each path of the router takes, so that a request whose path exists but whose
/// method does not is answered 405 with `Allow` (RFC 9110 §15.5.6), not 404. Learnt once every
/// route is registered; until then, and for a path no route has, it knows no method.
final class RouteMethods: Sendable {
    private let templates = Mutex<[(segments: [Substring], methods: Set<String>)]>([])

    func learn(_ routes: [CountersignServer.Route]) {
        var methods: [String: Set<String>] = [:]
        for route in routes { methods[route.path, default: []].insert(route.method.rawValue) }
        templates.withLock { table in
            table = methods.map { (path, methods) in (path.split(separator: "/", omittingEmptySubsequences: false), methods) }
        }
    }

    /// The methods some route at `path` takes, sorted; empty when no route is at that path.
    func allowed(at path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        let found = templates.withLock { table in
            table.filter { entry in
                entry.segments.count == segments.count && zip(entry.segments, segments).allSatisfy { pattern, segment in
                    pattern.hasPrefix("{") && pattern.hasSuffix("}") ? !segment.isEmpty : pattern == segment
                }
            }.reduce(into: Set<String>()) { $0.formUnion($1.methods) }
        }
        return found.sorted()
    }
}
