import Foundation

extension SCIMFilter {
    /// Whether `resource`, a resource as it is encoded (`SCIMUser.json`), matches this filter, by
    /// RFC 7644 §3.4.2.2's rules and the attribute definitions of `schema`.
    ///
    /// Strings compare without regard to case unless the attribute is `caseExact` (RFC 7643 §2.2);
    /// `dateTime` attributes compare as instants when both sides read as RFC 3339 timestamps;
    /// a multi-valued attribute matches when any of its values does, and a complex one compared
    /// without a sub-attribute is compared by its `value`. Booleans are only equal or not: an
    /// ordering or substring operator never matches them. Attributes the schema does not define
    /// compare as strings without regard to case, RFC 7643 §2.2's defaults.
    ///
    /// ```swift
    /// try SCIMFilter(parsing: #"userName eq "BJENSEN""#).matches(user.json(baseURL: base), schema: .user)  // true
    /// ```
    public func matches(_ resource: SCIMJSON, schema: SCIMResourceSchema) -> Bool {
        matches(resource) { path in
            if let definition = schema.definition(of: path) { return (definition, resource.member(path, in: schema)) }
            return (nil, resource.member(path, in: schema))
        }
    }

    /// `lookup` gives a path's definition and value at the level being evaluated: the resource,
    /// or one value of a multi-valued attribute inside brackets.
    private func matches(_ resource: SCIMJSON, lookup: (SCIMAttributePath) -> (SCIMAttributeDefinition?, SCIMJSON?)) -> Bool {
        switch self {
        case .and(let left, let right): return left.matches(resource, lookup: lookup) && right.matches(resource, lookup: lookup)
        case .or(let left, let right): return left.matches(resource, lookup: lookup) || right.matches(resource, lookup: lookup)
        case .not(let inner): return !inner.matches(resource, lookup: lookup)
        case .present(let path):
            let (_, value) = lookup(path)
            return Self.leaves(value).contains { $0.isPresent }
        case .compare(let path, let op, let literal):
            let (definition, value) = lookup(path)
            let values = Self.leaves(value)
            switch (op, literal) {
            case (.eq, .null): return values.isEmpty
            case (.ne, .null): return !values.isEmpty
            case (.ne, _): return !values.contains { Self.compare($0, .eq, literal, definition) }
            default: return values.contains { Self.compare($0, op, literal, definition) }
            }
        case .valuePath(let path, let inner):
            let (definition, value) = lookup(path)
            let elements = value?.arrayValue ?? value.map { [$0] } ?? []
            return elements.contains { inner.matches(value: $0, of: definition) }
        }
    }

    /// Whether one value of the multi-valued attribute `definition` matches, this filter's paths
    /// naming its sub-attributes (a filter inside brackets).
    func matches(value element: SCIMJSON, of definition: SCIMAttributeDefinition?) -> Bool {
        matches(element) { path in
            let sub = definition?.subAttribute(path.name)
            let value = element[caseInsensitive: path.name]
            guard let deeper = path.subAttribute else { return (sub, value) }
            return (sub?.subAttribute(deeper), value?[caseInsensitive: deeper])
        }
    }

    /// The values a comparison looks at: each element of an array, and the `value` of an object.
    private static func leaves(_ value: SCIMJSON?) -> [SCIMJSON] {
        switch value {
        case nil, .null?: []
        case .array(let elements)?: elements.flatMap { leaves($0) }
        case .object?: leaves(value?[caseInsensitive: "value"])
        case let value?: [value]
        }
    }

    private static func compare(_ value: SCIMJSON, _ op: SCIMCompareOperator, _ literal: SCIMJSON,
                                _ definition: SCIMAttributeDefinition?) -> Bool {
        switch (value, literal) {
        case (.string(let lhs), .string(let rhs)):
            if definition?.type == .dateTime, let left = Timestamp.date(lhs), let right = Timestamp.date(rhs) {
                return order(left, op, right)
            }
            let caseExact = definition?.caseExact ?? false
            let (a, b) = caseExact ? (lhs, rhs) : (lhs.lowercased(), rhs.lowercased())
            switch op {
            case .co: return b.isEmpty || a.contains(b)
            case .sw: return a.hasPrefix(b)
            case .ew: return a.hasSuffix(b)
            default: return order(a, op, b)
            }
        case (.bool(let lhs), .bool(let rhs)):
            return op == .eq ? lhs == rhs : false
        default:
            guard let lhs = value.number, let rhs = literal.number else { return false }
            return order(lhs, op, rhs)
        }
    }

    private static func order<T: Comparable>(_ lhs: T, _ op: SCIMCompareOperator, _ rhs: T) -> Bool {
        switch op {
        case .eq: lhs == rhs
        case .ne: lhs != rhs
        case .gt: lhs > rhs
        case .ge: lhs >= rhs
        case .lt: lhs < rhs
        case .le: lhs <= rhs
        case .co, .sw, .ew: false
        }
    }
}

extension SCIMJSON {
    /// The value `path` names in this resource: a core attribute (and sub-attribute) by name in
    /// any case, or an extension's attribute under its schema URN.
    func member(_ path: SCIMAttributePath, in schema: SCIMResourceSchema) -> SCIMJSON? {
        let container = schema.owns(path.schema) ? self : path.schema.flatMap { self[caseInsensitive: $0] }
        guard let attribute = container?[caseInsensitive: path.name] else { return nil }
        guard let sub = path.subAttribute else { return attribute }
        if case .array(let elements) = attribute { return .array(elements.compactMap { $0[caseInsensitive: sub] }) }
        return attribute[caseInsensitive: sub]
    }

    /// `pr`'s notion of a value (RFC 7644 §3.4.2.2): not null, and not empty.
    var isPresent: Bool {
        switch self {
        case .null: false
        case .string(let text): !text.isEmpty
        case .array(let elements): elements.contains { $0.isPresent }
        case .object(let members): !members.isEmpty
        default: true
        }
    }

    var number: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .decimal(let value): value
        default: nil
        }
    }
}
