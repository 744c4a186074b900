/// A group after a PATCH, and what happened to its members.
public struct SCIMGroupPatch: Sendable, Hashable {
    /// The group with its attributes changed and `changes` applied to the members it was given.
    public var group: SCIMGroup
    public var members: SCIMMemberChanges
}

extension SCIMGroup {
    /// The group after a PATCH (RFC 7644 §3.5.2), and its membership change.
    ///
    /// Members change only by being added and removed, as identity providers change them:
    /// `add` of `members` with `[{"value": id}]`, `remove` with the path `members[value eq "id"]`
    /// or with the path `members` and a value listing them (Entra ID), `replace` of all of them,
    /// `remove` of all. Those forms need no members loaded: storage may pass the group without
    /// them and apply `members` to its tables. A removal filter other than `value eq` is
    /// evaluated against the members given.
    ///
    /// ```swift
    /// let result = try group.applying(patch)
    /// // result.members.added, result.members.removed
    /// ```
    public func applying(_ patch: SCIMPatchRequest) throws(SCIMError) -> SCIMGroupPatch {
        var withoutMembers = self
        withoutMembers.members = []
        var application = PatchApplication(schema: .group, resource: withoutMembers.json(baseURL: "").objectValue ?? [:])
        application.resource["members"] = nil
        var changes = SCIMMemberChanges()
        for operation in patch.operations {
            if let path = operation.path {
                if Self.isMembers(path.attribute) {
                    try changeMembers(operation.op, path: path, value: operation.value, changes: &changes)
                } else {
                    try application.apply(operation)
                }
                continue
            }
            var attributes = operation.value?.objectValue ?? [:]
            if let key = attributes.keys.first(where: { (try? SCIMPatchPath(parsing: $0)).map { Self.isMembers($0.attribute) } == true }) {
                try changeMembers(operation.op, path: SCIMPatchPath(parsing: key), value: attributes[key], changes: &changes)
                attributes[key] = nil
            }
            if !attributes.isEmpty {
                try application.apply(SCIMPatchOperation(op: operation.op, value: .object(attributes)))
            }
        }
        var group = try SCIMGroup(json: .object(application.resource))
        group.id = id
        group.meta = meta
        group.members = changes.applied(to: members)
        return SCIMGroupPatch(group: group, members: changes)
    }

    private static func isMembers(_ attribute: SCIMAttributePath) -> Bool {
        SCIMResourceSchema.group.owns(attribute.schema) && attribute.names("members")
    }

    private func changeMembers(_ op: SCIMPatchOperation.Op, path: SCIMPatchPath, value: SCIMJSON?,
                               changes: inout SCIMMemberChanges) throws(SCIMError) {
        guard path.subAttribute == nil else {
            throw .invalidPath("Members are added and removed, not changed: \"\(path)\" names a sub-attribute of them.")
        }
        if let filter = path.filter {
            guard op == .remove else { throw .invalidPath("A filter on members selects members to remove; \(op.rawValue) takes the path members.") }
            let definition = SCIMResourceSchema.group.attribute("members")
            let ids = Self.listedIDs(filter)
                ?? members.filter { filter.matches(value: $0.json(baseURL: ""), of: definition) }.map(\.value)
            changes.remove(ids)
            return
        }
        switch op {
        case .add:
            changes.add(try Self.members(in: value))
        case .replace:
            changes.removeAll()
            changes.add(try Self.members(in: value))
        case .remove:
            if let value {
                changes.remove(try Self.members(in: value).map(\.value))
            } else {
                changes.removeAll()
            }
        }
    }

    /// The ids `value eq "…"`, alone or joined by `or`, names: members storage need not load.
    private static func listedIDs(_ filter: SCIMFilter) -> [String]? {
        switch filter {
        case .compare(let path, .eq, .string(let id)) where path.names("value"):
            return [id]
        case .or(let left, let right):
            guard let left = listedIDs(left), let right = listedIDs(right) else { return nil }
            return left + right
        default:
            return nil
        }
    }

    private static func members(in value: SCIMJSON?) throws(SCIMError) -> [SCIMMember] {
        guard let value else { return [] }
        var members: [SCIMMember] = []
        for (index, element) in (value.arrayValue ?? [value]).enumerated() {
            let reader = try ResourceReader(element, at: "members[\(index)]")
            members.append(SCIMMember(value: try reader.requiredString("value"), display: try reader.string("display")))
        }
        return members
    }
}
