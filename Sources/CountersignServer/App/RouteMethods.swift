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
    /// Where several templates match, the router takes the one with a literal segment earliest
    /// (`/Users/.search` before `/Users/{id}`), and so does this.
    func allowed(at path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        let found = templates.withLock { table in
            let matches = table.compactMap { entry -> (literal: [Bool], methods: Set<String>)? in
                guard entry.segments.count == segments.count else { return nil }
                var literal: [Bool] = []
                for (pattern, segment) in zip(entry.segments, segments) {
                    let parameter = pattern.hasPrefix("{") && pattern.hasSuffix("}")
                    guard parameter ? !segment.isEmpty : pattern == segment else { return nil }
                    literal.append(!parameter)
                }
                return (literal, entry.methods)
            }
            guard let best = matches.map(\.literal).max(by: { $0.lexicographicallyPrecedes($1) { !$0 && $1 } }) else {
                return Set<String>()
            }
            return matches.filter { $0.literal == best }.reduce(into: Set<String>()) { $0.formUnion($1.methods) }
        }
        return found.sorted()
    }
}
