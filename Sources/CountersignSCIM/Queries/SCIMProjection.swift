import Foundation

/// The `attributes` and `excludedAttributes` parameters (RFC 7644 §3.4.2.5): which attributes a
/// response carries. Entra ID asks for groups with `excludedAttributes=members`, which spares
/// storage loading them.
///
/// ```swift
/// let projection = try SCIMProjection(attributes: nil, excludedAttributes: "members")
/// projection.apply(to: group.json(baseURL: base), schema: .group)
/// ```
public struct SCIMProjection: Sendable, Hashable {
    /// Only these (and what is always returned), if given.
    public var attributes: [SCIMAttributePath]?
    public var excludedAttributes: [SCIMAttributePath]

    /// The parameters as the query string gives them: comma-separated attribute paths.
    public init(attributes: String?, excludedAttributes: String?) throws(SCIMError) {
        try self.init(attributes: attributes.map { $0.split(separator: ",") }, excludedAttributes: excludedAttributes.map { $0.split(separator: ",") })
    }

    /// The same from a search request's arrays.
    init(attributes: [Substring]?, excludedAttributes: [Substring]?) throws(SCIMError) {
        self.attributes = try attributes.map(Self.paths)
        self.excludedAttributes = try excludedAttributes.map(Self.paths) ?? []
    }

    /// Whether the response leaves out `name` (for storage to skip loading it).
    public func excludes(_ name: String) -> Bool {
        if excludedAttributes.contains(where: { $0.names(name) }) { return true }
        guard let attributes else { return false }
        return !attributes.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    private static func paths(_ parts: [Substring]) throws(SCIMError) -> [SCIMAttributePath] {
        var paths: [SCIMAttributePath] = []
        for part in parts {
            guard let path = SCIMAttributePath(part.trimmingCharacters(in: .whitespaces)[...]) else {
                throw .invalidValue("\"\(part)\" is not an attribute path.")
            }
            paths.append(path)
        }
        return paths
    }

    /// `resource` with only the attributes asked for; `id` and `schemas` always stay, and so does
    /// what the schema returns always (RFC 7643 §7 `returned`).
    public func apply(to resource: SCIMJSON, schema: SCIMResourceSchema) -> SCIMJSON {
        guard case .object(var members) = resource else { return resource }
        for key in Array(members.keys) where key != "schemas" {
            let returned = schema.attribute(key)?.returned
            if returned == .always { continue }
            if let attributes {
                let asked = attributes.filter { schema.owns($0.schema) && $0.name.caseInsensitiveCompare(key) == .orderedSame }
                if asked.isEmpty {
                    members[key] = nil
                } else if !asked.contains(where: { $0.subAttribute == nil }) {
                    members[key] = members[key]?.keeping(asked.compactMap(\.subAttribute))
                }
            }
            for excluded in excludedAttributes where schema.owns(excluded.schema) && excluded.name.caseInsensitiveCompare(key) == .orderedSame {
                if let sub = excluded.subAttribute {
                    members[key] = members[key]?.removing(sub)
                } else {
                    members[key] = nil
                }
            }
        }
        return .object(members)
    }
}

extension SCIMJSON {
    /// The object (or each object of an array) with only the named members.
    fileprivate func keeping(_ names: [String]) -> SCIMJSON {
        switch self {
        case .array(let elements): .array(elements.map { $0.keeping(names) })
        case .object(let members): .object(members.filter { key, _ in names.contains { $0.caseInsensitiveCompare(key) == .orderedSame } })
        default: self
        }
    }

    fileprivate func removing(_ name: String) -> SCIMJSON {
        switch self {
        case .array(let elements): .array(elements.map { $0.removing(name) })
        case .object: setting(name, to: nil)
        default: self
        }
    }
}
